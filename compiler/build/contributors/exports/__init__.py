"""Provider exports: the catalogue's tools as OpenAI, Anthropic and Gemini definitions."""
