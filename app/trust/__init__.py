"""Trust in the app: the core's trust policy built from the user's remembered decisions."""
