"""The wire: the protocol shared with the reference framework, the in-process bus and the query broker."""
