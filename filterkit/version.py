"""The version of filterkit (a module of its own, so that the modules needing it do not import the package's API)."""

__version__ = "0.4.0.dev0"
