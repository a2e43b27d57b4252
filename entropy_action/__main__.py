from entropy_action.cli.main import main

raise SystemExit(main())
