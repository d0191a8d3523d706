"""`python -m agents ...` is the `codeduet` command."""

from agents.cli.app import main

if __name__ == "__main__":
    main()
