"""The exceptions for what a user can fix, with the file and line they came from."""


class FilterkitError(Exception):
    """A problem a user can fix: bad input, a bad option, a missing plugin.

    ``str()`` gives ``FILE:LINE: message`` when the file and line are known.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def located(self, path: str | None = None, line: int | None = None) -> "FilterkitError":
        """This error with a file name and line filled in where still unknown."""
        return type(self)(
            self.message,
            self.path if self.path is not None else path,
            self.line if self.line is not None else line,
        )

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        elif self.line is not None:
            where = f"line {self.line}: "
        return where + self.message


def folder_given(path: str, format_name: str) -> FilterkitError:
    """The error for a folder given where a file of ``format_name`` is read (it had been "Is a directory")."""
    return FilterkitError(
        f"a folder is read as {format_name} here: a folder of ARFF parts is one input with --engine dask, a folder "
        "per class (a subfolder of text files each, no .arff beside them) with --from folders",
        path,
    )


class OptionError(FilterkitError):
    """Options of a stage or classifier that make no sense: a usage error on the command line."""


class ArffError(FilterkitError):
    """An ARFF file that cannot be read: malformed header, bad value, bad row."""


#: What a message advises when ``--engine dask`` finds no Dask.
DASK_INSTALL_HINT = "pip install 'filterkit-arff[dask]'"
