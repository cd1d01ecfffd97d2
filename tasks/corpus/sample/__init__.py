"""The shippable sample corpus: PDFs and questions this project writes itself (``python -m tasks.corpus.sample
DEST``). ``texts`` holds the documents' and questions' text, ``generate`` lays them out as PDFs."""
