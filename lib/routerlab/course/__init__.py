"""The courses: the Click and P4 exercises' checks, what they are made of, and the course
machine with its instructor's guide."""
