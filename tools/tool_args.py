"""The argument parser of every tool in tools/: argparse's, except that a
bad argument is one line on stderr and exit 2, as npusim reports bad input
(argparse itself prints the whole usage first).

    import tool_args
    ap = tool_args.ArgumentParser(description=...)
"""
import argparse


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (--help for usage)\n")
