"""Search in the app: the index service, the offline embedding model and query encoder, web search, the CLI."""
