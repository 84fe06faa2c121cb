"""The reading path: from a note's text to the facts a bundle quotes.

Every route that reads a note goes through this package, in this order, so they all agree
about what a unit, a word and a relevant passage are:

* :mod:`.words` the one analyzer (words, identifiers, folding, stemming, stop words);
* :mod:`.sentences` the sentence segmenter;
* :mod:`.facts` a note cut into the units a bundle may quote;
* :mod:`.relevance` what a request asks about, and whether facts cover it;
* :mod:`.passages` the units of a note that answer a request, with their context;
* :mod:`.transcripts` how quoted turns of a conversation are written.

Nothing here reads files or imports the engine: sources hand it text, and the scout, the
pack, the extractive route and the grounding check take its units.
"""
