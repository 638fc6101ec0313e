"""Reading ``catalog_src``: files under the source limits, tools, skills, assembled into a catalogue model."""
