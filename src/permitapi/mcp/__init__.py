"""The remote tool server (MCP) at /mcp: twelve tools over stateless streamable HTTP, thin
wrappers over the services the REST routers call (server, tools, schemas, auth, results)."""
