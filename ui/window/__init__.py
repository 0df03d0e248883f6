"""The main window and what surrounds its panels: launch, layout, menus, theme, languages, notifications."""
