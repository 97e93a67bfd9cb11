"""Publishing: campaigns run into datasets, their facts and generated reports, the
notebooks and the gallery."""
