"""filterkit: Weka-style ARFF filter chains for text classification."""

__version__ = "0.3.0"
