"""Measuring: one way in (:mod:`.measurement`), sweeps, searches, trial validation, loss
attribution, the comparison, fast reroute, microbenchmarks, campaign files and the doctor."""
