import sys

from mobile_agent.cli import main

sys.exit(main())
