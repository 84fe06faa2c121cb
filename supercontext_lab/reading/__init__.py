"""The reading path: from a note's text to the facts a bundle quotes.

Every route that reads a note goes through this package, in this order, so they all agree
about what a unit, a word and a relevant passage are:

* :mod:`.words` the one analyzer (words, identifiers, folding, stemming, stop words);
* :mod:`.sentences` the sentence segmenter, with the abbreviations it knows in
  :mod:`.abbreviations`;
* :mod:`.document` a note read as a document (markdown-it-py's blocks): :mod:`.units`
  the units it is cut into, :mod:`.layouts` what the lines of a paragraph are (e-mail
  headers, chat turns, log lines);
* :mod:`.facts` the units as the facts a bundle may quote;
* :mod:`.relevance` what a request asks about, and whether facts cover it;
* :mod:`.passages` the units of a note that answer a request, with their context;
* :mod:`.transcripts` how quoted turns of a conversation are written.

Nothing here reads files or imports the engine: sources hand it text, and the scout, the
pack, the extractive route and the grounding check take its units.
"""
