"""Helpers every layer may use: reading a CSV file (:mod:`.csvfile`), drawing a figure (:mod:`.figures`) and
writing an output file whole or not at all (:mod:`.outputs`)."""
