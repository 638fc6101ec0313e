"""``toolcat import openapi``: an OpenAPI 3 document to catalogue sources with http handlers."""
