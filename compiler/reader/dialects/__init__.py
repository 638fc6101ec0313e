"""The three discovery dialects (spec, gateway, namespaced) and the protocol that renders their answers.

``shared.py`` holds what every dialect needs; no dialect module imports another.
"""
