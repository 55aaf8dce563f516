"""Only the optional compiled tokenizer lives here; everything else is in pyproject.toml.

``optional=True``: without a C compiler the build goes on without it and filterkit
uses its pure-Python (numpy) reader path, which gives identical results.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("filterkit.arff._speedups", ["filterkit/arff/_speedups.c"], optional=True)])
