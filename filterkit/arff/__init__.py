"""ARFF input and output: a streaming reader, a writer and liac-arff conversions."""

from filterkit.arff.liac import from_liac, to_liac
from filterkit.arff.reader import ArffReader, read_arff
from filterkit.arff.writer import ArffWriter, write_arff

__all__ = ["ArffReader", "ArffWriter", "from_liac", "read_arff", "to_liac", "write_arff"]
