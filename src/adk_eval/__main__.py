"""``python -m adk_eval`` is the `adk-eval` command."""

from ._cli import entry

if __name__ == "__main__":  # not when a spawned worker process imports this module
    entry()
