"""Screenshots of screen regions, and how much a view changed between two of them.

The only module that imports Pillow. Regions are grabbed with mss
(perception/screen_capture.py) where it is installed, else with Pillow's
ImageGrab, which grabs over XCB on Linux and is what pyautogui uses on Windows
and macOS (pyautogui's own screenshot needs scrot on Linux).
"""

from __future__ import annotations

import base64
import io
import sys
import threading
import warnings
from typing import TYPE_CHECKING

from PIL import Image, ImageChops, ImageGrab

from perception.files import FileTooLarge, read_regular_file, replace_whole
from perception.yaml_files import FileProblem

if TYPE_CHECKING:
    from perception.screen_capture import RegionCapture

COMPARE_WIDTH = 64  # frames are compared as grey copies this wide: small noise averages out
# A screenshot the report reads: far more than a screen's (8K is 33 million pixels), far less than would
# take the machine's memory to decode.
MAX_SCREENSHOT_BYTES = 100_000_000
MAX_SCREENSHOT_PIXELS = 50_000_000
# What Pillow's readers raise for a file that is no whole image: SyntaxError for a broken PNG chunk, OSError
# for a file cut short, the bomb classes past its own pixel limits.
NOT_AN_IMAGE = (
    OSError,
    SyntaxError,
    ValueError,
    EOFError,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,
)


class ScreenGrabber:
    """Grabs (left, top, right, bottom) boxes of a display as RGB images; `method` says how."""

    def __init__(self, use_mss: bool = True) -> None:
        """`use_mss=False` grabs with Pillow even where mss is installed (the benchmark compares them)."""
        region_capture = _mss_region_capture()
        self._region_capture = region_capture if use_mss else None
        self.method = "mss" if self._region_capture is not None else "pillow"
        self._captures: dict[str, RegionCapture] = {}  # display -> its RegionCapture
        self._lock = threading.Lock()

    def grab(self, bbox: tuple[int, int, int, int], display: str = "") -> Image.Image:
        if self._region_capture is None:
            xdisplay = (display or None) if sys.platform.startswith("linux") else None  # None: the default
            return ImageGrab.grab(bbox=bbox, xdisplay=xdisplay).convert("RGB")
        with self._lock:
            capture = self._captures.setdefault(display, self._region_capture(display))
        width, height, rgb = capture.grab(bbox)
        return Image.frombytes("RGB", (width, height), rgb)


def _mss_region_capture() -> type[RegionCapture] | None:
    """RegionCapture where mss is installed, else None: Pillow's own grab."""
    try:
        from perception.screen_capture import RegionCapture
    except ImportError:  # mss is not installed
        return None
    return RegionCapture


def save_png(image, path):
    """Write `image` as PNG to `path`, atomically: a reader never sees half a file, and a link planted in the
    directory is never written through."""
    replace_whole(path, lambda file: image.save(file, format="PNG"))


def view_change(before, after, pixel_threshold) -> float:
    """The share of the view that changed, from 0 to 1: of grey copies COMPARE_WIDTH pixels wide,
    the pixels whose grey level moved by more than `pixel_threshold` (of 255)."""
    height = max(1, round(before.height * COMPARE_WIDTH / max(before.width, 1)))
    small = [image.convert("L").resize((COMPARE_WIDTH, height), Image.Resampling.BOX) for image in (before, after)]
    counts = ImageChops.difference(*small).histogram()
    return sum(counts[pixel_threshold + 1 :]) / (COMPARE_WIDTH * height)


def thumbnail_data_uri(path, width=320):
    """The screenshot at `path`, scaled to `width` pixels wide, as a JPEG data: URI a page can embed;
    FileProblem where it is no regular file, is too large, or is no whole image."""
    image = _screenshot(path)
    image.thumbnail((width, width * image.height // max(image.width, 1) or 1))
    encoded = io.BytesIO()
    image.save(encoded, format="JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(encoded.getvalue()).decode("ascii")


def _screenshot(path) -> Image.Image:
    """The image at `path`, read whole: a regular file of at most MAX_SCREENSHOT_BYTES and MAX_SCREENSHOT_PIXELS."""
    try:
        data = read_regular_file(path, MAX_SCREENSHOT_BYTES)
    except FileTooLarge:
        raise FileProblem(path, f"larger than {MAX_SCREENSHOT_BYTES:,} bytes, too large for a screenshot") from None
    except OSError as error:
        raise FileProblem(path, f"cannot read the screenshot: {error.strerror or error}") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)  # refused below, in one line
            with Image.open(io.BytesIO(data)) as screenshot:
                if screenshot.width * screenshot.height > MAX_SCREENSHOT_PIXELS:
                    raise FileProblem(path, f"{screenshot.width}x{screenshot.height} pixels, too large to show")
                return screenshot.convert("RGB")
    except NOT_AN_IMAGE as error:
        raise FileProblem(path, f"not a whole image ({error})") from None
