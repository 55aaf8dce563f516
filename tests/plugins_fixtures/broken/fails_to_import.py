"""A plugin whose import fails: it needs a module that does not exist."""

import filterkit_no_such_module  # noqa: F401
