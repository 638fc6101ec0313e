"""Importers: OpenAPI / Swagger specs and provider function definitions as catalogue sources."""
