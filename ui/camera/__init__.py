"""The camera panel and the status bar's camera switch."""
