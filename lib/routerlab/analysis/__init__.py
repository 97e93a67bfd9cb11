"""Data: the statistics of router benchmarking, the tidy dataset format and its readers,
the PASTRAMI raw format, figures, scenarios and citations. Nothing here measures."""
