"""PyInstaller's entry script for the one-file ``askd``: the same ``main``
as the ``askd`` console script of the wheel."""

from askd.cli.main import main

if __name__ == "__main__":
    main()
