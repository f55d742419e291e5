"""Helpers every layer may use: reading a CSV file (:mod:`.csvfile`) and drawing a figure (:mod:`.figures`)."""
