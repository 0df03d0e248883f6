"""The query classifier, stage one of hybrid search: rules, relations and Japanese analysis."""
