"""The build's contributors: one per artifact kind (index, exports, prompts, vectors).

``toolcat.build.pipeline.default_contributors`` lists them; each adds files to the build's ``ArtifactSet``.
"""
