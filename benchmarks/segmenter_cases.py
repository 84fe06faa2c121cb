"""Labelled sentence-boundary cases for ``python -m benchmarks segmenter``.

Three corpora, each a list of ``(text, sentences)`` pairs:

* :data:`GOLDEN_EN`: the 48 English "Golden Rules" of pySBD
  (https://github.com/nipunsadvilkar/pySBD, ``benchmarks/english_golden_rules.py`` at
  commit 5905f13be4fc95f407b98392e0ec303617a33d86), copied unchanged. pySBD is MIT
  licensed, Copyright (c) 2019 Nipun Sadvilkar; the rules themselves come from the
  pragmatic_segmenter Ruby gem (https://github.com/diasks2/pragmatic_segmenter, MIT,
  Copyright (c) 2015 Kevin S. Dias). The MIT licence asks that its notice go with the
  copy:

      Permission is hereby granted, free of charge, to any person obtaining a copy of
      this software and associated documentation files (the "Software"), to deal in the
      Software without restriction, including without limitation the rights to use,
      copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the
      Software, and to permit persons to whom the Software is furnished to do so, subject
      to the following conditions: The above copyright notice and this permission notice
      shall be included in all copies or substantial portions of the Software. THE
      SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.

* :data:`DEMO_NOTES`: every paragraph and list item of the shipped demo workspace's
  memory notes (``supercontext_lab/demo/workspace/memory``), as
  :func:`supercontext_lab.reading.facts.note_blocks` joins them, split by hand.
* :data:`LAB_NOTES`: notes of a marine-biology
  PhD student's committee, permits and dives, written for this benchmark to hold the
  abbreviations, titles, initials, numbers and times that notes carry. They were written
  knowing the segmenter's rules, so read their figure as coverage of those rules, not as
  accuracy on unseen text; the Golden Rules are the independent measure.

For the last two, the text is the sentences joined with single spaces.
"""

from __future__ import annotations

__all__ = ["CORPORA", "DEMO_NOTES", "GOLDEN_EN", "LAB_NOTES"]

Case = tuple[str, list[str]]

GOLDEN_EN: list[Case] = [
    # 1) Simple period to end sentence
    ("Hello World. My name is Jonas.", ["Hello World.", "My name is Jonas."]),
    # 2) Question mark to end sentence
    ("What is your name? My name is Jonas.", ["What is your name?", "My name is Jonas."]),
    # 3) Exclamation point to end sentence
    ("There it is! I found it.", ["There it is!", "I found it."]),
    # 4) One letter upper case abbreviations
    ("My name is Jonas E. Smith.", ["My name is Jonas E. Smith."]),
    # 5) One letter lower case abbreviations
    ("Please turn to p. 55.", ["Please turn to p. 55."]),
    # 6) Two letter lower case abbreviations in the middle of a sentence
    ("Were Jane and co. at the party?", ["Were Jane and co. at the party?"]),
    # 7) Two letter upper case abbreviations in the middle of a sentence
    (
        "They closed the deal with Pitt, Briggs & Co. at noon.",
        ["They closed the deal with Pitt, Briggs & Co. at noon."],
    ),
    # 8) Two letter lower case abbreviations at the end of a sentence
    ("Let's ask Jane and co. They should know.", ["Let's ask Jane and co.", "They should know."]),
    # 9) Two letter upper case abbreviations at the end of a sentence
    (
        "They closed the deal with Pitt, Briggs & Co. It closed yesterday.",
        ["They closed the deal with Pitt, Briggs & Co.", "It closed yesterday."],
    ),
    # 10) Two letter (prepositive) abbreviations
    ("I can see Mt. Fuji from here.", ["I can see Mt. Fuji from here."]),
    # 11) Two letter (prepositive & postpositive) abbreviations
    (
        "St. Michael's Church is on 5th st. near the light.",
        ["St. Michael's Church is on 5th st. near the light."],
    ),
    # 12) Possesive two letter abbreviations
    ("That is JFK Jr.'s book.", ["That is JFK Jr.'s book."]),
    # 13) Multi-period abbreviations in the middle of a sentence
    ("I visited the U.S.A. last year.", ["I visited the U.S.A. last year."]),
    # 14) Multi-period abbreviations at the end of a sentence
    (
        "I live in the E.U. How about you?",
        ["I live in the E.U.", "How about you?"],
    ),
    # 15) U.S. as sentence boundary
    (
        "I live in the U.S. How about you?",
        ["I live in the U.S.", "How about you?"],
    ),
    # 16) U.S. as non sentence boundary with next word capitalized
    (
        "I work for the U.S. Government in Virginia.",
        ["I work for the U.S. Government in Virginia."],
    ),
    # 17) U.S. as non sentence boundary
    ("I have lived in the U.S. for 20 years.", ["I have lived in the U.S. for 20 years."]),
    # Most difficult sentence to crack
    # 18) A.M. / P.M. as non sentence boundary and sentence boundary
    (
        "At 5 a.m. Mr. Smith went to the bank. He left the bank at 6 P.M. Mr. Smith then went to the store.",
        [
            "At 5 a.m. Mr. Smith went to the bank.",
            "He left the bank at 6 P.M.",
            "Mr. Smith then went to the store.",
        ],
    ),
    # 19) Number as non sentence boundary
    ("She has $100.00 in her bag.", ["She has $100.00 in her bag."]),
    # 20) Number as sentence boundary
    ("She has $100.00. It is in her bag.", ["She has $100.00.", "It is in her bag."]),
    # 21) Parenthetical inside sentence
    (
        "He teaches science (He previously worked for 5 years as an engineer.) at the local University.",
        [
            "He teaches science (He previously worked for 5 years as an engineer.) at the local University."
        ],
    ),
    # 22) Email addresses
    (
        "Her email is Jane.Doe@example.com. I sent her an email.",
        ["Her email is Jane.Doe@example.com.", "I sent her an email."],
    ),
    # 23) Web addresses
    (
        "The site is: https://www.example.50.com/new-site/awesome_content.html. Please check it out.",
        [
            "The site is: https://www.example.50.com/new-site/awesome_content.html.",
            "Please check it out.",
        ],
    ),
    # 24) Single quotations inside sentence
    (
        "She turned to him, 'This is great.' she said.",
        ["She turned to him, 'This is great.' she said."],
    ),
    # 25) Double quotations inside sentence
    (
        'She turned to him, "This is great." she said.',
        ['She turned to him, "This is great." she said.'],
    ),
    # 26) Double quotations at the end of a sentence
    (
        'She turned to him, "This is great." She held the book out to show him.',
        ['She turned to him, "This is great."', "She held the book out to show him."],
    ),
    # 27) Double punctuation (exclamation point)
    ("Hello!! Long time no see.", ["Hello!!", "Long time no see."]),
    # 28) Double punctuation (question mark)
    ("Hello?? Who is there?", ["Hello??", "Who is there?"]),
    # 29) Double punctuation (exclamation point / question mark)
    ("Hello!? Is that you?", ["Hello!?", "Is that you?"]),
    # 30) Double punctuation (question mark / exclamation point)
    ("Hello?! Is that you?", ["Hello?!", "Is that you?"]),
    # 31) List (period followed by parens and no period to end item)
    (
        "1.) The first item 2.) The second item",
        ["1.) The first item", "2.) The second item"],
    ),
    # 32) List (period followed by parens and period to end item)
    (
        "1.) The first item. 2.) The second item.",
        ["1.) The first item.", "2.) The second item."],
    ),
    # 33) List (parens and no period to end item)
    (
        "1) The first item 2) The second item",
        ["1) The first item", "2) The second item"],
    ),
    # 34) List (parens and period to end item)
    ("1) The first item. 2) The second item.", ["1) The first item.", "2) The second item."]),
    # 35) List (period to mark list and no period to end item)
    (
        "1. The first item 2. The second item",
        ["1. The first item", "2. The second item"],
    ),
    # 36) List (period to mark list and period to end item)
    (
        "1. The first item. 2. The second item.",
        ["1. The first item.", "2. The second item."],
    ),
    # 37) List with bullet
    (
        "• 9. The first item • 10. The second item",
        ["• 9. The first item", "• 10. The second item"],
    ),
    # 38) List with hypthen
    (
        "⁃9. The first item ⁃10. The second item",
        ["⁃9. The first item", "⁃10. The second item"],
    ),
    # 39) Alphabetical list
    (
        "a. The first item b. The second item c. The third list item",
        ["a. The first item", "b. The second item", "c. The third list item"],
    ),
    # 40) Geo Coordinates
    (
        "You can find it at N°. 1026.253.553. That is where the treasure is.",
        ["You can find it at N°. 1026.253.553.", "That is where the treasure is."],
    ),
    # 41) Named entities with an exclamation point
    (
        "She works at Yahoo! in the accounting department.",
        ["She works at Yahoo! in the accounting department."],
    ),
    # 42) I as a sentence boundary and I as an abbreviation
    (
        "We make a good team, you and I. Did you see Albert I. Jones yesterday?",
        ["We make a good team, you and I.", "Did you see Albert I. Jones yesterday?"],
    ),
    # 43) Ellipsis at end of quotation
    (
        "Thoreau argues that by simplifying one’s life, “the laws of the universe will appear less complex. . . .”",
        [
            "Thoreau argues that by simplifying one’s life, “the laws of the universe will appear less complex. . . .”"
        ],
    ),
    # 44) Ellipsis with square brackets
    (
        """"Bohr [...] used the analogy of parallel stairways [...]" (Smith 55).""",
        ['"Bohr [...] used the analogy of parallel stairways [...]" (Smith 55).'],
    ),
    # 45) Ellipsis as sentence boundary (standard ellipsis rules)
    (
        "If words are left off at the end of a sentence, and that is all that is omitted, indicate the omission with ellipsis marks (preceded and followed by a space) and then indicate the end of the sentence with a period . . . . Next sentence.",
        [
            "If words are left off at the end of a sentence, and that is all that is omitted, indicate the omission with ellipsis marks (preceded and followed by a space) and then indicate the end of the sentence with a period . . . .",
            "Next sentence.",
        ],
    ),
    # 46) Ellipsis as sentence boundary (non-standard ellipsis rules)
    (
        "I never meant that.... She left the store.",
        ["I never meant that....", "She left the store."],
    ),
    # 47) Ellipsis as non sentence boundary
    (
        "I wasn’t really ... well, what I mean...see . . . what I'm saying, the thing is . . . I didn’t mean it.",
        [
            "I wasn’t really ... well, what I mean...see . . . what I'm saying, the thing is . . . I didn’t mean it."
        ],
    ),
    # 48) 4-dot ellipsis
    (
        "One further habit which was somewhat weakened . . . was that of combining words into self-interpreting compounds. . . . The practice was not abandoned. . . .",
        [
            "One further habit which was somewhat weakened . . . was that of combining words into self-interpreting compounds.",
            ". . . The practice was not abandoned. . . .",
        ],
    ),
]


DEMO_NOTES_SENTENCES: list[list[str]] = [
    # global/amara.md
    [
        "Prof. Amara Okafor, University of Eastmere, is co-PI on SEEDSCAPE and the statistics lead.",
        "She reviews every kernel model before it goes into a paper or the grant.",
        "Her letter of support for the NBRC renewal arrived on 2026-11-27.",
    ],
    # global/bike-brake-pads.md
    [
        "Bike: rear disc brake squeals.",
        "Fix: replace resin pads (Shimano B05S type), clean rotor using isopropyl alcohol, then bed new pads: ten gentle stops.",
    ],
    # global/conversation-2026-11-20-aim2-restructure.md
    [
        "2026-11-20 conversation: we discussed shortening Aim 2 (landscape connectivity) to free a page for the sensitivity analysis.",
        "Agreed to merge the two connectivity metrics into one work package and move the circuit-theory details to the appendix.",
    ],
    # global/conversation-2026-11-24-reviewer-response.md
    [
        "2026-11-24 conversation: we discussed how the renewal answers the interim review.",
        'Plan: a short "Response to the interim review" box on page 1 pointing to Section 3.2, plus one figure comparing the 2Dt, exponential and lognormal kernels.',
        "Maya wants the tone factual, not defensive.",
    ],
    # global/conversation-2026-11-25-pipeline-gdal.md
    [
        "2026-11-25 conversation: we discussed why the pipeline failed on the Aurora cluster: the rasterio wheel was built against a different GDAL version.",
        "Fix: pin GDAL 3.8 in environment.yml and rebuild the conda environment.",
        "Jonas confirmed the rerun worked on 2026-11-26.",
    ],
    # global/deadline-budget-approval.md
    [
        "The Research Office needs the final renewal budget by 2026-12-08 to sign it off before submission.",
        "Contact: Priya Natarajan.",
        "Run the grant-budget-check skill before sending it.",
    ],
    # global/deadline-grant-renewal.md
    [
        "The NBRC Project Grant Renewal 2027–2030 for SEEDSCAPE is due 2026-12-15 at 14:00 CET.",
        "It is submitted through the NBRC application portal; late submissions are not accepted.",
        "Still open: Section 3.2 (sensitivity analysis), Aim 2 length, the Reyes letter, budget sign-off.",
    ],
    # global/decision-dispersal-kernel.md
    [
        "Decision (2026-11-12, with Amara Okafor): the 2Dt kernel is the primary dispersal kernel for SEEDSCAPE because it fits the long-distance tail at 34 of the 40 sites.",
        "The exponential and lognormal kernels are kept only as comparison kernels in the sensitivity analysis.",
        "The 2Dt shape parameter is fitted per site, not fixed.",
    ],
    # global/decision-python-r-split.md
    [
        "Decision: Python for the pipeline, simulations and figures; R only for the statistical models (glmmTMB, brms).",
        "Results pass between them as Parquet files, never as RDS.",
    ],
    # global/fact-hpc-cluster.md
    [
        "Heavy runs go to the Aurora HPC cluster (SLURM) at Northvale.",
        "A full SEEDSCAPE simulation needs about 6 hours on 8 nodes.",
    ],
    # global/fact-teaching.md
    [
        'Maya teaches the MSc course "Spatial Ecology with Python and R" in the spring term (starts 2027-01-18).',
        "Course materials are in the GitHub repo northvale-ecolab/spatial-ecology-course.",
    ],
    # global/holiday-lofoten.md
    [
        "Summer holiday idea: Lofoten, two weeks, July 2027, whole family.",
        "Ferry Bodø–Moskenes, then rorbu cabin near Reine; hike Reinebringen if weather clear.",
    ],
    # global/jonas-email-gbif-refresh.md
    [
        "Open question from Jonas Brandt about the data pipeline (email, 2026-11-30): should he refresh the GBIF occurrence download before the last sensitivity runs, or keep the 2026-10-01 snapshot used for all other results?",
        "He needs an answer before the Tuesday one-to-one on 2026-12-01.",
    ],
    # global/lab-meeting.md
    [
        "Lab meeting 2026-11-26: Jonas showed the rerun with the pinned GDAL; kernel fits unchanged.",
        "Agreed: Jonas produces the sensitivity-analysis figure by 2026-12-04; Maya drafts Section 3.2 text.",
        "Full notes are in files/notes/2026-11-26-lab-meeting.md.",
    ],
    # global/meeting-weekly-jonas.md
    [
        "Weekly one-to-one with Jonas Brandt, Tuesdays 10:00–10:45, room B2.114 or on Slack huddle.",
        "Standing agenda: pipeline status, thesis chapter 2, blockers.",
    ],
    # global/person-jonas-brandt.md
    [
        "Jonas Brandt is Maya's third-year PhD student (started September 2024).",
        "He owns the SEEDSCAPE snakemake pipeline (repo northvale-ecolab/seedscape-pipeline) and is writing thesis chapter 2 on fitting dispersal kernels across the 40 study sites.",
        "He prefers email for decisions and Slack (#seedscape-pipeline) for quick questions.",
    ],
    # global/person-priya-natarajan.md
    [
        "Priya Natarajan is the grants officer in the Northvale Research Office.",
        "She must approve the renewal budget before submission; her internal deadline is 2026-12-08.",
        "She wants the budget spreadsheet plus a one-page justification, sent by email.",
    ],
    # global/person-tomas-reyes.md
    [
        "Dr. Tomás Reyes is a remote-sensing collaborator who produces the harmonised land-cover rasters.",
        "He still owes his letter of support for the NBRC renewal (asked on 2026-11-19).",
        "He is usually quickest to reach on Slack.",
    ],
    # global/preference-figure-style.md
    [
        "Figure formatting for papers and the grant: Okabe-Ito colour palette, 7 pt sans-serif (Arial), 85 mm single column or 175 mm double column, exported as vector PDF.",
        "No titles on panels; bold lowercase panel letters (a, b, c); no top or right spines.",
        "All figures follow this, including those Jonas makes.",
    ],
    # global/preference-writing-style.md
    [
        'Grant and paper text in British spelling ("modelling", "colour").',
        'Short sentences, active voice, no buzzwords such as "leverage" or "cutting-edge".',
    ],
    # global/project-seedscape.md
    [
        "SEEDSCAPE models how seed dispersal changes across fragmented forest landscapes.",
        "Funded by the Nordic Biodiversity Research Council (NBRC), 2023–2026; the renewal would cover 2027–2030.",
        "Data: seed-trap counts from 40 forest-fragment sites, GBIF occurrences, CORINE land cover.",
    ],
    # global/sourdough-starter.md
    [
        "Sourdough starter: feed 1:5:5 (starter, rye flour, water) twice daily at room temperature.",
        "Loaf: 78% hydration, 2% salt; bulk ferment 5 hours, then fridge overnight.",
        "Bake at 250 °C: covered pot 20 minutes, then 25 minutes uncovered.",
    ],
    # project-grant/aims-outline.md
    [
        "Aim 1: fit dispersal kernels across 40 forest-fragment sites (Jonas's thesis, mostly done).",
        "Aim 2: landscape connectivity under fragmentation, built on the fitted kernels.",
        "Aim 3: forecasts of seed dispersal under land-use scenarios to 2050.",
        "Working draft: files/grant/aims.md.",
    ],
    # project-grant/budget-summary.md
    [
        "Renewal budget draft v3: EUR 1.18 million over four years.",
        "Main lines: postdoc (2 years, 100%), PhD student extension (6 months), fieldwork at 40 sites, HPC storage, open-access fees, one workshop in year 3.",
        "Open question: whether Aurora cluster hours can be costed as a direct cost.",
    ],
    # project-grant/data-management-plan.md
    [
        "Data management plan (v2): cleaned occurrence records and kernel fits go to Zenodo with a DOI at the end of each project year; code released under the MIT licence from the seedscape-pipeline repo.",
    ],
    # project-grant/format-rules.md
    [
        "NBRC narrative: at most 12 pages, 11 pt font, 2 cm margins; references and CVs do not count.",
        "Figures count towards the page limit.",
        "Upload as a single PDF built from the NBRC LaTeX template.",
    ],
    # project-grant/grant-reference.md
    [
        "The Northvale Research Office tracks the SEEDSCAPE renewal under the internal reference code GR-7731.",
        "Quote GR-7731 in every email to the Research Office and on the budget spreadsheet.",
        "Funder scheme: NBRC Project Grant Renewal 2027–2030; PI Maya Lindqvist, co-PI Amara Okafor.",
    ],
    # project-grant/letters-of-support.md
    [
        "Letters of support: Amara Okafor received 2026-11-27; Tomás Reyes pending (asked 2026-11-19, reminder due 2026-12-02); Northvale Head of Department received 2026-11-10.",
    ],
    # project-grant/reviewer-comments.md
    [
        'Interim review (June 2026): Reviewer 2 asked for a "sensitivity analysis of the dispersal kernel", showing how the connectivity results change if the kernel family or its parameters are wrong.',
        "Reviewer 1 asked for a more detailed data management plan (open data, DOIs).",
        "Both must be answered explicitly in the renewal.",
    ],
    # project-grant/sensitivity-analysis-plan.md
    [
        "Section 3.2 plan: refit connectivity with the 2Dt, exponential and lognormal kernels; vary the 2Dt scale and shape parameters by ±25%; report Sobol indices for the connectivity metric.",
        "Status 2026-11-30: simulations done for 36 of 40 sites (4 still queued); figure due from Jonas on 2026-12-04; text not started.",
    ],
    # project-grant/submission-checklist.md
    [
        "Submission checklist: narrative PDF, budget with justification, data management plan, CVs for PI and co-PI, three letters of support, response to the interim review (one page).",
        "Done: CVs, DMP draft.",
        "Open: narrative Section 3.2, budget sign-off, Reyes letter.",
    ],
    # skill-data-pipeline/cluster-profile.md
    [
        'Cluster runs use the snakemake profile profiles/aurora-slurm with the SLURM account nbrc-seedscape and the partition "long"; at most 64 jobs at once.',
    ],
    # skill-data-pipeline/data-sources.md
    [
        "Inputs: GBIF occurrence download for 212 woody species (refreshed 2026-10-01), CORINE land cover 2018 rasters harmonised by Tomás Reyes, seed-trap counts from the 40 sites.",
    ],
    # skill-data-pipeline/known-issues.md
    [
        "Known issue: rasterio fails to import on Aurora when GDAL is not 3.8; GDAL is now pinned in environment.yml (fixed 2026-11-25).",
        "Rebuild the conda environment after any dependency change.",
    ],
    # skill-data-pipeline/last-run.md
    [
        "Last full pipeline run: 2026-11-26 on Aurora, 6 h 12 min, all rules passed; outputs in results/2026-11-26/.",
    ],
    # skill-data-pipeline/pipeline-layout.md
    [
        "The SEEDSCAPE pipeline is a snakemake workflow in northvale-ecolab/seedscape-pipeline.",
        "Rules in order: fetch_gbif, clean_occurrences, rasterize_landcover, fit_kernels, simulate_connectivity, make_figures.",
        "Outputs go to results/<run-date>/; the kernel fits are Parquet files read by the R models.",
    ],
    # skill-literature-review/digest-format.md
    [
        "Literature digest format: a Markdown table with columns citation, one-line finding, relevance to a SEEDSCAPE aim (1, 2 or 3) and read priority (high, medium, low).",
        'At most 15 papers per digest; add the BibTeX keys from the Zotero group library "SEEDSCAPE".',
    ],
    # skill-literature-review/excluded-topics.md
    [
        "Leave out marine larval dispersal and GPS animal-movement studies unless they model seed transport.",
    ],
    # skill-literature-review/last-digest.md
    [
        "Last literature digest: 2026-11-18, covering September–October 2026, 12 papers.",
        "Two were flagged high priority for Section 3.2 (kernel misspecification in connectivity models).",
        "Next digest due mid-December, after the grant is submitted.",
    ],
    # skill-literature-review/search-strings.md
    [
        'Saved search for the SEEDSCAPE reading list: ("seed dispersal" OR "dispersal kernel") AND (fragment* OR connectivity) AND (model* OR simulat*) Sources: Web of Science, Scopus, bioRxiv; only papers from the last 24 months.',
    ],
]

LAB_NOTES_SENTENCES: list[list[str]] = [
    # A committee and a meeting, from a PhD student's notes.
    ["Committee: Prof. Henrik Aalto (chair), Dr. Nkechi Obi, Dr. Paul Ferreira (external)."],
    ["The meeting is on 14 March at 10.30 in Room 2.14.", "Bring the draft."],
    [
        "The permit was signed by H. Aalto on 12.03.2026.",
        "The skipper charges approx. EUR 450 per day, i.e. EUR 2,250 for the week.",
    ],
    [
        "Dives are planned for Mon. 6 Oct. and Tue. 7 Oct., weather permitting.",
        "Meet at the harbour at 7 a.m. sharp.",
    ],
    ["Logger T2 was lost at site No. 5 during the storm.", "T1 and T3 are fine."],
    ["Mrs. Obi asked whether we want the grant code on the invoice.", "Yes, use GR-4410."],
    ["Temperature rose by 0.35 °C per decade (Fig. 2, Sec. 3.1).", "See Eq. 4 for the fit."],
    [
        "Follow Smith, J. and Tanaka, K. (2021) for the transect layout.",
        "Their protocol uses 25 m transects.",
    ],
    [
        "As shown by Ortega et al. (2019), kelp cover fell by 40% after the 2015 heatwave.",
        "We cite them in the introduction.",
    ],
    [
        "Use the analysis scripts in v1.2.3 of the repo, not 1.3.0-rc1.",
        "Python 3.11.7 is pinned in environment.yml.",
    ],
    ["Write the methods in methods.md, then export report.pdf.", "Dr. Obi reads it first."],
    ["The boat leaves St. Abbs at 9 a.m.", "The crossing takes about 40 min."],
    [
        "Contact the skipper at skipper@abbs-charters.co.uk or via https://abbs-charters.co.uk/booking.",
        "He answers within a day.",
    ],
    [
        "Still to write: site description, dive protocol, statistics, etc.",
        "The deadline is Friday.",
    ],
    ["Bring masks, fins, spare O-rings, etc. and the first-aid kit."],
    ["Samples from St. Andrews vs. Dunbar differ, cf. Table 3.", "Ask Prof. Aalto about it."],
    ['Henrik said "the permit is fine."', "Then he left for the conference."],
    ["Did the logger survive?!", "Nobody knows yet."],
    ["The old protocol (see the 2019 manual.) is out of date.", "Use the new one."],
    ["I asked about the boat...", "Nothing yet."],
    ["The survey found 12 species … mostly algae and sponges."],
    ["Sampling at 10:30 and 14:00 on both days.", "The tide is low at 12.15."],
    [
        "Permit No. 2026/114 covers all sites in the U.K. and one in Norway.",
        "It expires in Dec. 2027.",
    ],
    ["J. R. R. Tolkien's maps hang in the Dept. of Marine Science at the Univ. of St Andrews."],
    [
        "The call with the U.S. Geological Survey is at 4 p.m. CET.",
        "They will share the buoy data.",
    ],
    ["Logger T2: lost.", "Logger T3: recovered, 98.5% of the records readable."],
    ["Aim 1. Map kelp cover at the 12 sites.", "Aim 2. Relate cover to temperature."],
    ["Steps: 1. download the CTD casts 2. clean them 3. plot the profiles."],
    ["Results are due by 5 p.m. on Fri. 10 Oct.", "Send them to Dr. Ferreira."],
    [
        "Ask Mx. Rivera about the ROV, e.g. whether it can reach 60 m.",
        "The ROV costs ca. 300 per dive.",
    ],
    ["Smith et al. found the same.", "Their sites were deeper."],
    ["We compared our data with Ortega et al.", "The trend is the same."],
    ["She said no.", "Then she signed the form."],
    ["Check p. 14 and pp. 20–25 of the manual.", "Section 3.2 covers decompression."],
    ["Total cost: EUR 1,250.50.", "Paid by the lab."],
]

DEMO_NOTES: list[Case] = [(" ".join(case), case) for case in DEMO_NOTES_SENTENCES]
LAB_NOTES: list[Case] = [(" ".join(case), case) for case in LAB_NOTES_SENTENCES]

#: The corpora by name, in the order the benchmark reports them.
CORPORA: dict[str, list[Case]] = {
    "golden-en (pySBD)": GOLDEN_EN,
    "demo notes": DEMO_NOTES,
    "lab notes": LAB_NOTES,
}
