"""One module per subcommand: NAME, HELP, add_arguments(parser) and run(args) -> int."""
