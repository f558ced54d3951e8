"""Print the text of each page of a PDF (python3 extract.py FILE.pdf)."""
import sys

from pypdf import PdfReader

for page in PdfReader(sys.argv[1]).pages:
    print(page.extract_text())
    print()
