"""Package data: Jinja templates (docs site, prompt sections) loaded through importlib.resources."""
