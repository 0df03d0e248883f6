"""The companions' language models: the default endpoint found from the settings, and its connection test."""
