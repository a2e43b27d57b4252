from entropy_action.cli import main

raise SystemExit(main())
