"""The phone and the agent as MCP tools (``mobile-agent mcp``), built on the official
``mcp`` SDK (the ``mcp`` extra). ``build_server(settings, service)`` gives the ``MCPServer``
over a ``phone.PhoneService`` that its caller closes once the server has stopped;
``cli.register`` adds the subcommand through the ``mobile_agent.commands`` entry point.

May import: ``mcp``, ``mobile_agent`` (settings, errors, device, operations, locate, agent).
"""
