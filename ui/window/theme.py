"""Light and dark themes (style sheets in ``resources/styles``) and a font that renders Japanese.

``"system"`` follows the platform's colour scheme (``QStyleHints.colorScheme``) and keeps following it when the
user switches their desktop between light and dark while Madoi runs.
"""

from __future__ import annotations

from typing import Final, Literal

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPalette
from PySide6.QtWidgets import QApplication

from resources import RESOURCES_DIR

ThemeChoice = Literal["system", "light", "dark"]
Scheme = Literal["light", "dark"]

STYLES_DIR: Final = RESOURCES_DIR / "styles"
# Latin first so English keeps its own shapes; then CJK families in the order they look best on each platform;
# Qt falls back through the list glyph by glyph, so Japanese never turns into tofu boxes when any one is present.
FONT_FAMILIES: Final[tuple[str, ...]] = (
    "Noto Sans", "Segoe UI", "Cantarell", "DejaVu Sans",
    "Noto Sans CJK JP", "Noto Sans JP", "Source Han Sans JP", "IPAexGothic", "IPAGothic", "TakaoPGothic",
    "VL PGothic", "Yu Gothic UI", "Meiryo UI", "Meiryo", "Hiragino Sans", "Hiragino Kaku Gothic ProN",
)
JAPANESE_FAMILIES: Final[tuple[str, ...]] = FONT_FAMILIES[4:]


def resolve_scheme(choice: ThemeChoice, app: QApplication, platform_palette: QPalette | None = None) -> Scheme:
    if choice != "system":
        return choice
    scheme = app.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return "dark"
    if scheme == Qt.ColorScheme.Light:
        return "light"
    # Unknown (e.g. offscreen, or an older desktop): judge by the palette's window colour.
    window = (platform_palette or app.palette()).window().color()
    return "dark" if window.lightness() < 128 else "light"


def style_sheet(scheme: Scheme) -> str:
    return (STYLES_DIR / f"{scheme}.qss").read_text(encoding="utf-8")


_PALETTES: Final[dict[Scheme, dict[QPalette.ColorRole, str]]] = {
    "light": {QPalette.ColorRole.Window: "#f4f2ec", QPalette.ColorRole.WindowText: "#1f2430",
              QPalette.ColorRole.Base: "#ffffff", QPalette.ColorRole.AlternateBase: "#f4f2ec",
              QPalette.ColorRole.Text: "#1f2430", QPalette.ColorRole.Button: "#fbfaf7",
              QPalette.ColorRole.ButtonText: "#1f2430", QPalette.ColorRole.Highlight: "#d9822b",
              QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.PlaceholderText: "#9a968c",
              QPalette.ColorRole.ToolTipBase: "#fffbe8", QPalette.ColorRole.ToolTipText: "#1f2430"},
    "dark": {QPalette.ColorRole.Window: "#171a20", QPalette.ColorRole.WindowText: "#e8e6e1",
             QPalette.ColorRole.Base: "#252a33", QPalette.ColorRole.AlternateBase: "#1c1f26",
             QPalette.ColorRole.Text: "#e8e6e1", QPalette.ColorRole.Button: "#2b303a",
             QPalette.ColorRole.ButtonText: "#e8e6e1", QPalette.ColorRole.Highlight: "#c9752c",
             QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.PlaceholderText: "#7c808a",
             QPalette.ColorRole.ToolTipBase: "#2b303a", QPalette.ColorRole.ToolTipText: "#e8e6e1"},
}


def palette(scheme: Scheme) -> QPalette:
    """The colours the style draws with (spin boxes, combo boxes, scroll bars: what the style sheet leaves alone)."""
    result = QPalette()
    for role, colour in _PALETTES[scheme].items():
        result.setColor(role, QColor(colour))
    dim = QColor("#7c808a" if scheme == "dark" else "#a6a297")
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        result.setColor(QPalette.ColorGroup.Disabled, role, dim)
    return result


def ui_font(point_size: float | None = None) -> QFont:
    """The application font: available families from :data:`FONT_FAMILIES`, in order."""
    available = set(QFontDatabase.families())
    families = [f for f in FONT_FAMILIES if f in available] or ["sans-serif"]
    font = QFont()
    font.setFamilies(families)
    if point_size is not None:
        font.setPointSizeF(point_size)
    return font


def japanese_font_available() -> bool:
    available = set(QFontDatabase.families())
    return any(f in available for f in JAPANESE_FAMILIES)


class ThemeManager(QObject):
    """Applies a theme to the application and, for ``"system"``, re-applies it when the platform switches."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        self.choice: ThemeChoice = "system"
        self.scheme: Scheme = "light"
        self._active = False  # after reset(): leave the application alone, even on platform changes
        self._system_palette: QPalette | None = None  # kept: "system" must judge the platform's, not ours
        app.styleHints().colorSchemeChanged.connect(self._platform_changed)

    def apply(self, choice: ThemeChoice) -> Scheme:
        """Applies ``choice``; one already in force is left as it is: a style sheet set on the application polishes
        every widget again, which held the window for 1.2-1.7 s at every Save on a busy machine (the settings
        dialog stayed black meanwhile)."""
        scheme = resolve_scheme(choice, self._app, self._system_palette)
        if self._active and choice == self.choice and scheme == self.scheme:
            return scheme
        self.choice = choice
        self._active = True
        self.scheme = scheme
        self._app.setFont(ui_font())
        if self._system_palette is None:
            self._system_palette = QPalette(self._app.palette())
        self._app.setPalette(palette(self.scheme))
        self._app.setStyleSheet(style_sheet(self.scheme))
        self._app.setProperty("madoiScheme", self.scheme)
        return self.scheme

    def reset(self) -> None:
        """Back to the platform's own look (used by tests and when embedding)."""
        self._active = False
        self._app.setStyleSheet("")
        if self._system_palette is not None:
            self._app.setPalette(self._system_palette)
            self._system_palette = None

    def _platform_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self._active and self.choice == "system":
            self.apply("system")


def apply_theme(app: QApplication, choice: ThemeChoice) -> ThemeManager:
    """Applies ``choice`` now; keep (or look up with :func:`theme_manager`) the manager to change it later."""
    manager = theme_manager(app)
    manager.apply(choice)
    return manager


def theme_manager(app: QApplication) -> ThemeManager:
    existing = app.findChild(ThemeManager)
    return existing if isinstance(existing, ThemeManager) else ThemeManager(app)
