"""``python -m filterkit``: the ``filterkit`` command."""

from filterkit.cli import main

if __name__ == "__main__":
    main()
