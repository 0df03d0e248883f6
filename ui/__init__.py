"""PySide6 widgets. No business logic lives here."""
