"""Fetches gen/data/digits.csv: the UCI handwritten digits (8x8 images) as scikit-learn ships them.

    python3 scripts/fetch_digits.py           # download, extract, check, write
    python3 scripts/fetch_digits.py --check   # only check the file already in gen/data/

Downloads the scikit-learn wheel with `pip download scikit-learn==1.9.1 --no-deps` into a
temporary folder, reads sklearn/datasets/data/digits.csv.gz from it (a wheel is a zip file),
decompresses it and checks its SHA-256 before writing it. The file is 1797 lines of 64 pixel
values (0..16, row by row) followed by the digit (0..9). See gen/data/README.md for provenance
and licence.
"""
import gzip
import hashlib
import pathlib
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "gen" / "data" / "digits.csv"
VERSION = "1.9.1"
MEMBER = "sklearn/datasets/data/digits.csv.gz"
# SHA-256 of the decompressed digits.csv (264712 bytes).
SHA256 = "6ebb3d2fee246a4e99363262ddf8a00a3c41bee6014c373ed9d9216ba7f651b8"


def check(data: bytes) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"digits.csv has SHA-256 {digest}, expected {SHA256}")
    rows = data.decode("ascii").splitlines()
    assert len(rows) == 1797, len(rows)
    assert all(len(r.split(",")) == 65 for r in rows)


def main() -> None:
    if "--check" in sys.argv[1:]:
        check(OUT.read_bytes())
        print(f"{OUT.relative_to(ROOT)} is the expected file")
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"scikit-learn=={VERSION}", "--no-deps",
             "--only-binary=:all:", "--dest", tmp],
            check=True,
        )
        wheels = sorted(pathlib.Path(tmp).glob("scikit_learn-*.whl"))
        if not wheels:
            sys.exit("pip downloaded no scikit-learn wheel")
        with zipfile.ZipFile(wheels[0]) as z:
            data = gzip.decompress(z.read(MEMBER))
    check(data)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(data)
    print(f"wrote {OUT.relative_to(ROOT)} ({len(data)} bytes, SHA-256 checked)")


if __name__ == "__main__":
    main()
