"""ARFF input and output: a streaming reader, a writer and liac-arff conversions."""

from filterkit.arff.reader import ArffReader, read_arff
from filterkit.arff.writer import ArffWriter, write_arff

__all__ = ["ArffReader", "ArffWriter", "read_arff", "write_arff"]
