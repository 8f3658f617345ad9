"""Build the sample dataset: the Skerrow Isles, an invented archipelago.

Every passage, fact and question below was written for this project; nothing
is copied from anywhere. Running the script rewrites ``corpus.jsonl``,
``queries.jsonl``, ``triples.jsonl`` and ``qrels/{test,dev}.tsv`` beside it,
byte for byte the same each time::

    python datasets/sample/build_sample.py

Each passage lists the facts it states as ``subject | relation | object``
lines (names exactly as written in the passage) and the aliases it gives.
Each query has a category, graded gold passages (2 answers it, 1 partly,
0 judged not relevant) and, for multi-hop queries, its two hops.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE_URL = "https://sample.searchtrace.invalid/doc/"
FIRST_DAY = date(2018, 1, 1)
SPAN_DAYS = 2555  # about seven years of record dates


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    collection: str
    tags: tuple[str, ...]
    text: str
    triples: tuple[tuple[str, str, str], ...]
    aliases: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Q:
    id: str
    category: str
    text: str
    gold: dict[str, int]
    answer: str = ""
    hops: tuple[str, str] | None = None

    @property
    def split(self) -> str:
        return self.id.split("-")[0]


DOCS: list[Doc] = []
QUERIES: list[Q] = []


def doc(
    doc_id: str, title: str, collection: str, tags: str, text: str, triples: str,
    aliases: dict[str, list[str]] | None = None,
) -> None:
    """Register a passage; ``triples`` holds one ``subject | relation | object`` per line."""
    facts = tuple(
        tuple(part.strip() for part in line.split("|"))
        for line in triples.strip().splitlines()
        if line.strip()
    )
    for fact in facts:
        if len(fact) != 3:
            raise ValueError(f"{doc_id}: bad triple {fact}")
    DOCS.append(Doc(doc_id, title, collection, tuple(tags.split()), " ".join(text.split()), facts, aliases or {}))


def query(
    qid: str, category: str, text: str, gold: dict[str, int] | None = None, answer: str = "",
    hops: tuple[str, str] | None = None,
) -> None:
    """Register a query; ``gold`` maps passage ids to grades 0-2."""
    QUERIES.append(Q(qid, category, " ".join(text.split()), gold or {}, answer, hops))


# =============================================================================
# Gazetteer: the islands
# =============================================================================

doc("gaz-skerrow-isles", "The Skerrow Isles", "gazetteer", "archipelago geography",
    """The Skerrow Isles, often called simply the Skerrows, are a chain of eight islands strung
    across a cold grey sea. Hallowmere, the largest, sits near the middle of the chain and holds
    the capital, Port Vell. Brannoch and Ostrel lie to the north, divided by the narrow strait
    known as the Gullet, while Quillon, Saffra Key, Dunmarrow, Lantry and the volcanic Ember Holm
    complete the ring. The islands have been governed jointly by the Tide Council since 1350.""",
    """
    Skerrow Isles | capital | Port Vell
    Skerrow Isles | governed by | Tide Council
    Hallowmere | part of | Skerrow Isles
    Brannoch | part of | Skerrow Isles
    Ostrel | part of | Skerrow Isles
    Quillon | part of | Skerrow Isles
    Saffra Key | part of | Skerrow Isles
    Dunmarrow | part of | Skerrow Isles
    Lantry | part of | Skerrow Isles
    Ember Holm | part of | Skerrow Isles
    Gullet | separates | Brannoch
    Gullet | separates | Ostrel
    """, {"Skerrow Isles": ["the Skerrows"]})

doc("gaz-hallowmere", "Hallowmere", "gazetteer", "island hallowmere",
    """Hallowmere is the largest of the Skerrow Isles and is known to sailors as the Great Isle.
    Its spine of granite rises to Mount Cairnhold, whose snowmelt feeds the River Vell. Three towns
    share the island: Port Vell at the river mouth, Greywick on the windy western shore and
    Amberlow in the sheltered valley upstream. Barley, slate and sheep's cheese are its chief
    produce, and nearly every road on the island eventually leads down to the harbour at Port
    Vell.""",
    """
    Hallowmere | part of | Skerrow Isles
    Hallowmere | highest peak | Mount Cairnhold
    Port Vell | located on | Hallowmere
    Greywick | located on | Hallowmere
    Amberlow | located on | Hallowmere
    """, {"Hallowmere": ["the Great Isle"]})

doc("gaz-brannoch", "Brannoch", "gazetteer", "island brannoch wool",
    """Brannoch, in the north of the chain, is a rolling country of heather, dry-stone walls and
    sheep. The upland of Tarrow Moor fills its interior, and from the moor the River Merrin winds
    south-east to the sea. Kestrel Bay, the island's harbour, faces Hallowmere across open water;
    Fennick, the wool town, straddles the Merrin; and Holloway Cross stands where the old drove
    roads meet. Brannoch fleece has been the island's fortune for three centuries.""",
    """
    Tarrow Moor | located on | Brannoch
    River Merrin | flows through | Brannoch
    Kestrel Bay | located on | Brannoch
    Fennick | located on | Brannoch
    Holloway Cross | located on | Brannoch
    Brannoch | produces | Brannoch fleece
    """)

doc("gaz-ostrel", "Ostrel", "gazetteer", "island ostrel salt",
    """Across the Gullet from Brannoch lies Ostrel, a flat, wind-scoured island whose eastern
    shore is one long chain of salt pans. Marrowgate, its largest town, crouches behind the walls
    of Marrowgate Keep on a rocky headland. The little River Tolly wanders past the fishing
    village of Tull before losing itself in the marshes at Saltreach, home of the salt boilers.
    Grey smoke from the boiling houses can be seen from the deck of any ship in the strait.""",
    """
    Marrowgate | located on | Ostrel
    Tull | located on | Ostrel
    Saltreach | located on | Ostrel
    River Tolly | flows through | Ostrel
    Marrowgate Keep | located in | Marrowgate
    """)

doc("gaz-quillon", "Quillon", "gazetteer", "island quillon orchards",
    """Quillon is the gentlest of the isles, a green slope of orchards and terraces facing the
    morning sun. Its cloudpear trees give the island its fame and most of its wealth. The River
    Lissom tumbles over Spindle Falls in the hills, passes the clockmaking town of Harl and reaches
    the sea at Sorrel Point, the island's port. Between them lies Vintner's Rest, a village of
    stills and cellars where the island's brandy is made.""",
    """
    Quillon | known for | cloudpear trees
    Sorrel Point | located on | Quillon
    Harl | located on | Quillon
    Vintner's Rest | located on | Quillon
    River Lissom | flows through | Quillon
    """)

doc("gaz-saffra-key", "Saffra Key", "gazetteer", "island saffra-key reefs",
    """Saffra Key is a low, sandy island at the southern end of the chain, ringed by reefs and
    shallow lagoons. Red mereweed grows thickly in its shallows, and the dye pressed from it has
    made the harbour town of Cindermouth rich. Palisade, a walled town on the southern cape, keeps
    watch over the reef, and the beam of Hookstone Light sweeps the water beyond it. Orrin's
    Landing, on the quiet northern beach, is said to be where the first settlers came ashore.""",
    """
    Saffra Key | source of | mereweed
    Cindermouth | located on | Saffra Key
    Palisade | located on | Saffra Key
    Orrin's Landing | located on | Saffra Key
    Hookstone Light | located on | Saffra Key
    """)

doc("gaz-dunmarrow", "Dunmarrow", "gazetteer", "island dunmarrow peat",
    """Dunmarrow is a low, waterlogged isle of reed beds, black peat and slow brown channels. Peat
    dug from its bogs is stacked to dry along every lane and shipped north from Dunmarrow Quay to
    heat half the archipelago. The River Dunn crawls through Blackfen, a village of eel-catchers,
    before reaching the quay, and on the western shore the hamlet of Wrenhollow looks out over the
    sunken trees of the Drowned Orchard.""",
    """
    Dunmarrow | exports | peat
    Blackfen | located on | Dunmarrow
    Dunmarrow Quay | located on | Dunmarrow
    Wrenhollow | located on | Dunmarrow
    River Dunn | flows through | Blackfen
    """)

doc("gaz-lantry", "Lantry", "gazetteer", "island lantry forest",
    """Lantry is the forest island. Oak and pine cover its hills so densely that travellers once
    needed a guide to cross from one coast to the other. Lake Ilvane lies at its heart, and the
    River Braid carries its overflow past the sawmills of Mossbank to the shipyards of Carrow.
    Thistledown, high on the eastern downs, is famous for bees rather than timber, but it is
    timber that built nearly every hull in the Skerrows.""",
    """
    Lantry | part of | Skerrow Isles
    Lantry | produces | oak
    Lake Ilvane | located on | Lantry
    River Braid | flows out of | Lake Ilvane
    Mossbank | located on | Lantry
    Carrow | located on | Lantry
    Thistledown | located on | Lantry
    """)

doc("gaz-ember-holm", "Ember Holm", "gazetteer", "island ember-holm volcano",
    """Ember Holm is the youngest and wildest island, a black cone of rock rising from the sea at
    the north-western edge of the chain. Mount Scoria, the volcano at its centre, still breathes
    steam from its summit crater. Hot springs bubble up at Emberly, where the bathhouses draw
    visitors from every island; Kilnsey, on the leeward coast, is home to the glassblowers; and
    Ashgrove, on the lower slopes, was half buried by ash in the eruption of 1602.""",
    """
    Mount Scoria | located on | Ember Holm
    Emberly | located on | Ember Holm
    Kilnsey | located on | Ember Holm
    Ashgrove | located on | Ember Holm
    """)

# =============================================================================
# Gazetteer: towns
# =============================================================================

doc("gaz-port-vell", "Port Vell", "gazetteer", "town hallowmere capital",
    """Port Vell, the capital of the Skerrow Isles, grew up where the River Vell meets the sea on
    the eastern coast of Hallowmere. Older islanders still call it the Old Harbour. The Tide
    Council meets in its domed hall above the fish market, and the Honourable Company of Pilots
    keeps its house on the quay. Each summer the Founders' Regatta fills the harbour with painted
    boats. The town's steep lanes are paved with slate from the Cairnhold quarries.""",
    """
    Port Vell | capital of | Skerrow Isles
    Port Vell | located on | Hallowmere
    River Vell | mouth at | Port Vell
    Tide Council | seated in | Port Vell
    Honourable Company of Pilots | seated in | Port Vell
    Founders' Regatta | held in | Port Vell
    """, {"Port Vell": ["the Old Harbour"]})

doc("gaz-greywick", "Greywick", "gazetteer", "town hallowmere lamps",
    """Greywick is a town of lamp-makers on the western shore of Hallowmere, where the wind blows
    so steadily that the chimneys all lean a little eastward. The Lampwrights' Guild was founded
    here, and its workshops still crowd the lanes behind the harbour wall. On Lantern Night each
    winter every window in Greywick is lit at once. The town gave its name to the Treaty of
    Greywick, which ended the Lantern War in 1606.""",
    """
    Greywick | located on | Hallowmere
    Lampwrights' Guild | founded in | Greywick
    Lantern Night | held in | Greywick
    Treaty of Greywick | ended | Lantern War
    """)

doc("gaz-amberlow", "Amberlow", "gazetteer", "town hallowmere scholars",
    """Amberlow lies in the broad valley of the River Vell, a day's walk upstream from Port Vell.
    Its honey-coloured stone houses give the town its name. The Chartmakers' Hall stands beside
    the old bridge, and the town has long been a place of scholars, copyists and mapmakers.
    Orchards of plum and quince climb the valley sides above the rooftops.""",
    """
    River Vell | flows through | Amberlow
    Chartmakers' Hall | located in | Amberlow
    """)

doc("gaz-kestrel-bay", "Kestrel Bay", "gazetteer", "town brannoch harbour",
    """Kestrel Bay is the main harbour of Brannoch, a deep horseshoe of water sheltered from the
    northern gales by two long headlands. Wool ships load at its stone piers, and the packet boat
    from Port Vell calls twice a week. The River Merrin enters the sea at the bay's southern
    corner. Along the northern shore runs the covered ropewalk of the Ropewalkers' Guild, rebuilt
    in stone after the fire of 1609. Kestrels nest in the cliffs above the town and gave it its
    name.""",
    """
    Kestrel Bay | located on | Brannoch
    River Merrin | mouth at | Kestrel Bay
    Ropewalkers' Guild | seated in | Kestrel Bay
    """)

doc("gaz-fennick", "Fennick", "gazetteer", "town brannoch wool",
    """Fennick is the wool town of Brannoch, built on both banks of the River Merrin where the
    moorland streams gather. Its weavers work in tall narrow houses with wide upper windows to
    catch the light, and the Shearing Fair draws drovers from the whole island each June. A stone
    bridge with seven arches joins the two halves of the town; it replaced the timber bridge that
    collapsed in 1577.""",
    """
    Fennick | located on | Brannoch
    Fennick | stands on | River Merrin
    Shearing Fair | held in | Fennick
    """)

doc("gaz-holloway-cross", "Holloway Cross", "gazetteer", "town brannoch market",
    """Holloway Cross grew up where four drove roads meet in the middle of Brannoch, below the
    southern edge of Tarrow Moor. A weathered stone cross still marks the meeting point. Every
    Thursday the square fills with sheep, cattle and wool buyers, and the inns around it do more
    business that day than in the rest of the week together. The Moor Road to the north coast
    begins at its northern gate.""",
    """
    Holloway Cross | located on | Brannoch
    Holloway Cross | market day | Thursday
    Moor Road | begins at | Holloway Cross
    """)

doc("gaz-marrowgate", "Marrowgate", "gazetteer", "town ostrel fortress",
    """Marrowgate is the largest town on Ostrel and the only one on that island with walls. It is
    dominated by Marrowgate Keep, a squat fortress of dark basalt on the headland, which withstood
    the corsairs of Vask during the siege of 1527. Below the keep, the town's streets run down to
    a harbour crowded with salt barges. Marrowgate has produced more Tidewardens than any town
    except Port Vell.""",
    """
    Marrowgate | located on | Ostrel
    Marrowgate Keep | located in | Marrowgate
    Marrowgate Keep | withstood | corsairs of Vask
    """)

doc("gaz-tull", "Tull", "gazetteer", "village ostrel fishing",
    """Tull is a fishing village of perhaps forty cottages on the banks of the River Tolly, a mile
    above the marshes. Its boats go out before dawn for herring and sprats, and the sprat oil
    pressed in its sheds once lit the lamps of half the islands. Life in Tull has always been
    hard; the churchyard holds many stones carved with the names of men lost at sea.""",
    """
    Tull | stands on | River Tolly
    Tull | produces | sprat oil
    """)

doc("gaz-saltreach", "Saltreach", "gazetteer", "town ostrel salt",
    """Saltreach sits at the edge of the great marsh where the River Tolly spreads out into a maze
    of creeks. Seawater is let into shallow clay ponds, left to thicken in the sun and then boiled
    down in iron pans until only grey crystals remain. The Saltboilers' Guild governs every pan.
    Each midsummer, when the first harvest of the year is raked, the people of Saltreach hold the
    Salt Moon, dancing on the dykes by torchlight.""",
    """
    River Tolly | ends at | Saltreach
    Saltboilers' Guild | seated in | Saltreach
    Saltreach | holds | Salt Moon
    """)

doc("gaz-sorrel-point", "Sorrel Point", "gazetteer", "town quillon port",
    """Sorrel Point is Quillon's port, a cheerful jumble of warehouses and pastel houses on a spit
    of land at the mouth of the River Lissom. Cloudpears and brandy leave from its quays in
    autumn, bound for every island. The town was closed to shipping for forty days during the
    quarantine of 1625, an episode its older families still speak of with a shudder.""",
    """
    Sorrel Point | located on | Quillon
    River Lissom | mouth at | Sorrel Point
    """)

doc("gaz-vintners-rest", "Vintner's Rest", "gazetteer", "village quillon brandy",
    """Vintner's Rest is hardly more than a single street of stone cellars climbing a hillside
    above the Lissom valley. Almost every house has a copper still in its yard. Cloudpear brandy
    was first distilled here in 1530, and the village has never wanted another trade. Visitors are
    warned that the cellar air alone is enough to make a stranger unsteady.""",
    """
    cloudpear brandy | first distilled in | Vintner's Rest
    """)

doc("gaz-harl", "Harl", "gazetteer", "town quillon clocks",
    """Harl is a small, orderly town on the middle reaches of the River Lissom, famous across the
    Skerrows for its clocks. The Clockmakers' Fraternity has its hall on the market square, and
    the town's bells are said to strike in more perfect agreement than any others in the islands.
    Water from the Lissom turns the wheels of several grinding shops where gears and springs are
    finished.""",
    """
    River Lissom | flows through | Harl
    Clockmakers' Fraternity | seated in | Harl
    """)

doc("gaz-cindermouth", "Cindermouth", "gazetteer", "town saffra-key dye",
    """Cindermouth is the busiest town on Saffra Key, built around a lagoon whose water runs red
    on pressing days. The mereweed dyers work in open sheds along the shore, and the whole town
    smells faintly of iodine and wet rope. Twice a year the Crimson Fair brings cloth merchants
    from Brannoch and Hallowmere to bid for the new dye. The name comes from the dark volcanic
    sand of its beach, carried south, the locals claim, from Ember Holm.""",
    """
    Cindermouth | located on | Saffra Key
    Cindermouth | trades in | mereweed
    Crimson Fair | held in | Cindermouth
    """)

doc("gaz-palisade", "Palisade", "gazetteer", "town saffra-key walls",
    """Palisade is a walled town on the southern cape of Saffra Key. Its name recalls the timber
    stockade that once protected the first settlement from raiders; the present stone walls were
    built by the mason Yorick Bastable in the 1560s. From the walls one can see the whole length
    of the Hookstone reef and, at night, the sweeping beam of Hookstone Light.""",
    """
    Palisade | located on | Saffra Key
    Yorick Bastable | built walls of | Palisade
    Palisade | overlooks | Hookstone reef
    """)

doc("gaz-orrins-landing", "Orrin's Landing", "gazetteer", "village saffra-key settlers",
    """Orrin's Landing is a quiet village of boat-builders and net-menders on the northern beach
    of Saffra Key. Tradition holds that the navigator Orrin Skelt ran his boat ashore here in
    1211, the first of the settlers to reach the islands, and a rough cairn on the dunes marks the
    spot. Every child on Saffra Key is taught to recite the names of his crew.""",
    """
    Orrin's Landing | located on | Saffra Key
    Orrin Skelt | landed at | Orrin's Landing
    """)

doc("gaz-blackfen", "Blackfen", "gazetteer", "village dunmarrow eels",
    """Blackfen is a straggle of reed-thatched houses on stilts along the River Dunn in the heart
    of Dunmarrow. Its people have caught eels for as long as anyone remembers, setting wicker
    traps in the channels at dusk and emptying them at dawn. Smoked Blackfen eel is sold on every
    island, and the Eel Supper, held each November, is the liveliest night of the fen year.""",
    """
    Blackfen | located on | Dunmarrow
    Blackfen | stands on | River Dunn
    Blackfen | famous for | eels
    Eel Supper | held in | Blackfen
    """)

doc("gaz-dunmarrow-quay", "Dunmarrow Quay", "gazetteer", "town dunmarrow harbour",
    """Dunmarrow Quay is the island's only deep-water harbour, a long timber wharf stacked high
    with peat bricks waiting for the northbound barges. The River Dunn meets the sea here in a
    wide, muddy mouth. Shipbreakers also work at the quay: the hulks of old ships are towed in to
    be stripped of their timbers and iron.""",
    """
    Dunmarrow Quay | located on | Dunmarrow
    River Dunn | mouth at | Dunmarrow Quay
    Dunmarrow Quay | exports | peat
    """)

doc("gaz-wrenhollow", "Wrenhollow", "gazetteer", "village dunmarrow",
    """Wrenhollow is a hamlet of a dozen cottages on the western shore of Dunmarrow, sheltered by
    a ridge of dunes. At low water the tops of drowned trees show above the waves offshore: that
    is the Drowned Orchard. The infirmary founded by the physician Petronella Gask in 1600 still
    stands at the end of the lane, its garden full of fen herbs.""",
    """
    Wrenhollow | located on | Dunmarrow
    Drowned Orchard | lies off | Wrenhollow
    Petronella Gask | founded infirmary at | Wrenhollow
    """)

doc("gaz-thistledown", "Thistledown", "gazetteer", "town lantry bees",
    """Thistledown stands high on the eastern downs of Lantry, far above the forest, where heather
    and clover grow in every direction. It is a town of beekeepers: straw skeps line the garden
    walls, and the Hivewardens' Guild has kept its hall here since 1478. Heather honey from
    Thistledown is dark, thick and faintly bitter, and it fetches twice the price of any other
    honey in the islands.""",
    """
    Thistledown | located on | Lantry
    Hivewardens' Guild | seated in | Thistledown
    Thistledown | produces | heather honey
    """)

doc("gaz-carrow", "Carrow", "gazetteer", "town lantry shipbuilding",
    """Carrow is the shipbuilding town of Lantry, set where the River Braid widens into a
    sheltered estuary. Its slipways have launched most of the great ships of the Skerrows, from
    the Dauntless Mary to the Gilded Tern, and the Shipwrights' Guild has met in the yard hall by
    the water for generations. Each spring the Keel Blessing sends a procession down to the
    slipways to bless every hull laid down that year.""",
    """
    Carrow | located on | Lantry
    River Braid | mouth at | Carrow
    Shipwrights' Guild | seated in | Carrow
    Keel Blessing | held in | Carrow
    """)

doc("gaz-mossbank", "Mossbank", "gazetteer", "town lantry timber",
    """Mossbank is a timber town in the wooded valley of the River Braid. The whine of saws fills
    the valley from dawn to dusk, for the river drives a string of sawmills along its banks, the
    first of them built by Anselm Tarry in 1490. Logs are floated down to Carrow in great rafts
    each spring.""",
    """
    River Braid | flows through | Mossbank
    Anselm Tarry | built sawmill at | Mossbank
    """)

doc("gaz-ashgrove", "Ashgrove", "gazetteer", "town ember-holm",
    """Ashgrove is a town of narrow lanes on the lower slopes of Mount Scoria. Grey ash from the
    1602 eruption still lies under its gardens, and a new quarter was built on higher ground after
    the lower streets were buried. Each year on the anniversary of the eruption the people of
    Ashgrove keep the Ember Vigil, sitting up until sunrise with lanterns in their windows.""",
    """
    Ashgrove | lies on | Mount Scoria
    Ashgrove | keeps | Ember Vigil
    """)

doc("gaz-emberly", "Emberly", "gazetteer", "town ember-holm springs",
    """Emberly clusters around a dozen hot springs on the southern flank of Mount Scoria. The
    water rises scalding and smelling of sulphur, and it is cooled in a chain of stone basins
    before bathers step in. Bathhouses, lodging houses and apothecaries make up most of the town.
    Physicians from every island send their patients to Emberly for the rheumatism and the
    chest.""",
    """
    Emberly | known for | hot springs
    """)

doc("gaz-kilnsey", "Kilnsey", "gazetteer", "town ember-holm glass",
    """Kilnsey is a glassmaking town on the sheltered leeward coast of Ember Holm. Its furnaces
    burn day and night, and the Glassblowers' Guild guards its secrets behind the high walls of
    the guild court. Fine volcanic ash, carted down from the slopes of Mount Scoria, goes into the
    famous ember glass. The harbour is small, and the glass leaves in padded crates aboard the
    Cinder Wren and her sister boats.""",
    """
    Kilnsey | located on | Ember Holm
    Glassblowers' Guild | seated in | Kilnsey
    Kilnsey | produces | ember glass
    Cinder Wren | sails from | Kilnsey
    """)

# =============================================================================
# Gazetteer: rivers, landmarks and waters
# =============================================================================

doc("gaz-river-vell", "River Vell", "gazetteer", "river hallowmere",
    """The River Vell is the longest river in the Skerrow Isles. It rises in a ring of springs
    below the summit of Mount Cairnhold, drops through a gorge of pink granite and then runs slow
    and wide through the valley at Amberlow before emptying into the sea at Port Vell. Salmon
    still run up the Vell each autumn, and the Tide Council forbids netting above the Amberlow
    bridge.""",
    """
    River Vell | rises on | Mount Cairnhold
    River Vell | flows through | Amberlow
    River Vell | mouth at | Port Vell
    """)

doc("gaz-river-merrin", "River Merrin", "gazetteer", "river brannoch",
    """The River Merrin gathers its water from the peat bogs of Tarrow Moor and flows south-east
    across Brannoch. It is a brown, fast river, stained the colour of strong tea by the peat. At
    Fennick it turns the fulling mills of the wool trade; below the town it slows and widens,
    entering the sea at Kestrel Bay.""",
    """
    River Merrin | rises on | Tarrow Moor
    River Merrin | flows through | Fennick
    River Merrin | mouth at | Kestrel Bay
    """)

doc("gaz-river-tolly", "River Tolly", "gazetteer", "river ostrel",
    """The River Tolly is a short, meandering stream on Ostrel. From the low hills behind
    Marrowgate it wanders past the fishing village of Tull and then spreads into the marshes of
    Saltreach, where its fresh water is carefully kept out of the salt ponds by a system of
    sluices and dykes. In dry summers the Tolly almost vanishes.""",
    """
    River Tolly | rises near | Marrowgate
    River Tolly | flows through | Tull
    River Tolly | ends at | Saltreach
    """)

doc("gaz-river-lissom", "River Lissom", "gazetteer", "river quillon",
    """The River Lissom is the river of Quillon. High in the island's hills it pours over Spindle
    Falls in a single thread of white water, then threads through orchards and vineyards to Harl,
    where its current turns the grinding wheels of the clockmakers. It meets the sea at Sorrel
    Point. In the Great Frost of 1630 the Lissom froze from the falls to the sea.""",
    """
    River Lissom | falls over | Spindle Falls
    River Lissom | flows through | Harl
    River Lissom | mouth at | Sorrel Point
    """)

doc("gaz-river-dunn", "River Dunn", "gazetteer", "river dunmarrow",
    """The River Dunn hardly seems to move at all. It seeps out of the bogs in the centre of
    Dunmarrow, wanders in loops through Blackfen and reaches the sea at Dunmarrow Quay, dark with
    peat and thick with eels. When it flooded in 1612 after a week of storms, the water stood
    knee-deep in the houses of Blackfen for a month.""",
    """
    River Dunn | flows through | Blackfen
    River Dunn | mouth at | Dunmarrow Quay
    River Dunn | flooded in | 1612
    """)

doc("gaz-river-braid", "River Braid", "gazetteer", "river lantry",
    """The River Braid is the overflow of Lake Ilvane, spilling out through a notch in the lake's
    western rim. It runs swift and clear through the oak woods of Lantry, split in places into
    several channels that twist around one another like plaited hair, which is how it got its
    name. Rafts of logs ride it down past Mossbank to the estuary at Carrow.""",
    """
    River Braid | flows out of | Lake Ilvane
    River Braid | flows through | Mossbank
    River Braid | mouth at | Carrow
    """)

doc("gaz-mount-cairnhold", "Mount Cairnhold", "gazetteer", "mountain hallowmere",
    """Mount Cairnhold is the highest peak in the Skerrow Isles, a bare granite dome on Hallowmere
    whose summit is crowned by a great cairn of stones. Each traveller who climbs it adds a stone.
    Snow lies on the summit for half the year, and the River Vell springs from its eastern
    shoulder. Slate quarries on its lower slopes supply the roofs of Port Vell.""",
    """
    Mount Cairnhold | located on | Hallowmere
    Mount Cairnhold | source of | River Vell
    """)

doc("gaz-tarrow-moor", "Tarrow Moor", "gazetteer", "moor brannoch",
    """Tarrow Moor is a high, treeless expanse of heather and bog filling the middle of Brannoch.
    Black-faced sheep roam it freely in summer, tended by shepherds who live in turf huts for
    months at a time. Mist comes down without warning, and the moor has swallowed more than one
    careless walker. The River Merrin rises in its peat bogs.""",
    """
    Tarrow Moor | located on | Brannoch
    Tarrow Moor | grazed by | black-faced sheep
    Tarrow Moor | source of | River Merrin
    """)

doc("gaz-gullet", "The Gullet", "gazetteer", "strait navigation",
    """The Gullet is the narrow, dangerous strait between Brannoch and Ostrel. Tides race through
    it at the speed of a trotting horse, and a line of hidden rocks called Caddock's Teeth lies
    just beneath the surface at its eastern end. No ship may pass the Gullet without a licensed
    pilot of the Honourable Company of Pilots aboard, a rule first made in 1402.""",
    """
    Gullet | separates | Brannoch
    Gullet | separates | Ostrel
    Caddock's Teeth | located in | Gullet
    Honourable Company of Pilots | pilots ships through | Gullet
    """)

doc("gaz-spindle-falls", "Spindle Falls", "gazetteer", "waterfall quillon",
    """Spindle Falls is the tallest waterfall in the islands, where the River Lissom drops over a
    sheer lip of rock in the hills of Quillon. Because the stream is narrow, the fall looks like a
    single thread unwinding from a spindle, and so it was named. In the Great Frost of 1630 it
    froze solid, and people walked up from Harl to see the column of ice.""",
    """
    Spindle Falls | located on | Quillon
    River Lissom | falls over | Spindle Falls
    """)

doc("gaz-drowned-orchard", "The Drowned Orchard", "gazetteer", "landmark dunmarrow",
    """The Drowned Orchard lies in the shallow bay off Wrenhollow on Dunmarrow. Until 1466 it was
    dry land planted with apple trees; a storm surge that autumn broke through the dunes and the
    sea never left. At the lowest spring tides the grey stumps and branches still break the
    surface, and divers say the rows of trunks can be followed for a quarter of a mile under the
    water.""",
    """
    Drowned Orchard | lies off | Wrenhollow
    Drowned Orchard | planted with | apple trees
    Drowned Orchard | flooded in | 1466
    """)

doc("gaz-lake-ilvane", "Lake Ilvane", "gazetteer", "lake lantry",
    """Lake Ilvane fills a deep basin in the forested centre of Lantry. Its water is so clear that
    boatmen claim they can count the pebbles at forty feet. The lake is fed by countless small
    springs and empties westward into the River Braid. An old legend says a bell from a drowned
    chapel rings beneath its surface on still nights.""",
    """
    Lake Ilvane | located on | Lantry
    Lake Ilvane | drains into | River Braid
    """)

doc("gaz-mount-scoria", "Mount Scoria", "gazetteer", "volcano ember-holm",
    """Mount Scoria is the volcano that forms Ember Holm. Its cone is scarred by old lava flows and
    its summit crater steams constantly. The mountain last erupted in 1602, burying part of
    Ashgrove and darkening the sky over the western islands for three days. Glassblowers collect
    the fine ash on its slopes for ember glass.""",
    """
    Mount Scoria | located on | Ember Holm
    Mount Scoria | erupted in | 1602
    Mount Scoria | supplies ash for | ember glass
    """)

doc("gaz-hookstone-light", "Hookstone Light", "gazetteer", "lighthouse saffra-key",
    """Hookstone Light stands ninety feet above the surf on a spur of black rock at the southern
    tip of Saffra Key, marking the Hookstone reef. It was completed in 1568. Its lamp burns sprat
    oil behind a reflecting hood of silvered copper, and on clear nights its beam can be seen from
    Hallowmere. Keepers live in a cottage at its foot, and the stair to the lantern room has one
    hundred and twelve steps.""",
    """
    Hookstone Light | located on | Saffra Key
    Hookstone Light | height | ninety feet
    Hookstone Light | completed in | 1568
    Hookstone Light | fitted with | reflecting hood
    Hookstone Light | marks | Hookstone reef
    """)

doc("gaz-vell-sound", "Vell Sound", "gazetteer", "bay hallowmere lights",
    """Vell Sound is the broad bay on which Port Vell stands, sheltered from the east by the long
    shingle spit called the Tongue. Ships anchor in its deep middle ground to wait for a pilot or a
    fair tide. The Vell Sound beacon, on the tip of the Tongue, was the first light in the islands
    to be fitted with a reflecting hood, in 1523.""",
    """
    Vell Sound | adjoins | Port Vell
    Vell Sound beacon | located in | Vell Sound
    Vell Sound beacon | fitted with | reflecting hood
    """)

doc("gaz-farther-shoals", "The Farther Shoals", "gazetteer", "shoals exploration",
    """The Farther Shoals are a wide scatter of sandbanks, lagoons and low cays lying twenty days'
    sail south of Saffra Key. They have no fresh water and no permanent inhabitants, but turtles
    breed on their beaches and the lagoons are rich in fish. Island ships visit them rarely; the
    currents around them are treacherous and the nearest safe harbour is far behind.""",
    """
    Farther Shoals | lies south of | Saffra Key
    """)

doc("gaz-caddocks-teeth", "Caddock's Teeth", "gazetteer", "rocks gullet navigation",
    """Caddock's Teeth are a line of sharp basalt rocks lying just under the surface at the
    eastern mouth of the Gullet. At half tide the water over them boils white, but at high water
    there is no sign of them at all. They are named after the pilot who first charted them, and
    pilots still steer by two leading marks on the Ostrel shore to pass safely between them.""",
    """
    Caddock's Teeth | located in | Gullet
    """)

doc("gaz-marrowgate-keep", "Marrowgate Keep", "gazetteer", "fortress ostrel",
    """Marrowgate Keep is the fortress that guards the headland above Marrowgate on Ostrel. Its
    thick walls of dark basalt, built around 1380, enclose a tower, a chapel and a deep rock-cut
    cistern. The keep has been besieged only once, in 1527, and never taken. Today it houses the
    Tide Council's garrison of Ostrel and a small museum of arms.""",
    """
    Marrowgate Keep | located in | Marrowgate
    Marrowgate Keep | built around | 1380
    """)

doc("gaz-salt-stair", "The Salt Stair", "gazetteer", "cliffs ostrel seabirds",
    """The Salt Stair is a line of high white cliffs along the northern coast of Ostrel, stepped in
    ledges like a giant staircase. In spring the ledges are crowded with nesting guillemots and
    kittiwakes, and the egg-gatherers of Marrowgate still climb down on ropes to take a share of
    the eggs, as their ancestors did. The cliffs are chalk streaked with salt, hence the name.""",
    """
    Salt Stair | located on | Ostrel
    """)

doc("gaz-hookstone-reef", "The Hookstone reef", "gazetteer", "reef saffra-key wrecks",
    """The Hookstone reef curves south and west from the tip of Saffra Key like a fishhook, a mile
    and a half of black rock and broken water. It has claimed more ships than any other hazard in
    the islands, among them the Gilded Tern and the Morwen. Since 1650 a bell buoy has marked its
    outer end.""",
    """
    Hookstone reef | located off | Saffra Key
    Gilded Tern | wrecked on | Hookstone reef
    Morwen | wrecked on | Hookstone reef
    """)

doc("gaz-tide-council", "The Tide Council", "gazetteer", "government council",
    """The Tide Council is the governing assembly of the Skerrow Isles, founded at Port Vell in 1350
    when the eight islands agreed to settle their quarrels by vote instead of by raid. Each island
    sends two councillors, and together they elect a Tidewarden to preside for a term of years.
    The Council sets harbour dues, keeps the peace at sea and maintains the lights. Its hall, with
    a green copper dome, overlooks the fish market.""",
    """
    Tide Council | founded in | 1350
    Tide Council | seated in | Port Vell
    Tide Council | led by | Tidewarden
    """)

doc("gaz-tidewarden", "The office of Tidewarden", "gazetteer", "government office",
    """The Tidewarden is the presiding officer of the Tide Council, elected by the councillors from
    among their own number. A Tidewarden serves until resigning, dying or losing a vote of
    confidence, and holds the seal of the islands, commands the Council's ships in time of war and
    fires the starting gun at the Founders' Regatta. The badge of office is a chain of eight
    silver links.""",
    """
    Tidewarden | presides over | Tide Council
    Tidewarden | starts | Founders' Regatta
    """)

# =============================================================================
# Biographies
# =============================================================================

doc("bio-aldous-prane", "Aldous Prane", "biographies", "lampwright founder",
    """Aldous Prane (1371-1439) was a tinsmith born in Greywick who made the first storm lantern
    able to stay alight in a full gale, around 1409. Three years later he gathered a dozen fellow
    craftsmen and founded the Lampwrights' Guild. Prane was a stubborn, quarrelsome man by every
    account, but his lantern design is still made in the guild's workshops almost unchanged, and
    his portrait hangs above the guild's hearth.""",
    """
    Aldous Prane | born in | Greywick
    Aldous Prane | invented | storm lantern
    Aldous Prane | founded | Lampwrights' Guild
    """)

doc("bio-orsolya-venn", "Orsolya Venn", "biographies", "lampwright inventor lighthouses",
    """Orsolya Venn (1488-1549), born in Amberlow, entered the Lampwrights' Guild as an apprentice
    at fourteen and spent her life improving the lamps of lighthouses. In 1521 she devised the
    reflecting hood, a polished bowl that gathered the light of a lamp and threw it out to sea as a
    single beam. She never married, and left her tools to the guild along with a purse to pay for
    the schooling of orphans.""",
    """
    Orsolya Venn | born in | Amberlow
    Orsolya Venn | member of | Lampwrights' Guild
    Orsolya Venn | invented | reflecting hood
    """)

doc("bio-ysolde-marrick", "Ysolde Marrick", "biographies", "chartmaker founder",
    """Ysolde Marrick (1466-1531) was born in Port Vell, the daughter of a harbour pilot, and learned
    to draw coastlines from her father's sketches. In 1502 she established the Chartmakers' Hall,
    gathering the islands' scattered surveyors into a single guild. Her masterpiece, the Great
    Chart of the Skerrows, took eight years to engrave and was finished in 1510; for a century no
    ship's master would sail without a copy.""",
    """
    Ysolde Marrick | born in | Port Vell
    Ysolde Marrick | founded | Chartmakers' Hall
    Ysolde Marrick | drew | Great Chart of the Skerrows
    """)

doc("bio-tobiah-quarle", "Tobiah Quarle", "biographies", "ropemaker guild-master",
    """Tobiah Quarle (1510-1579) of Kestrel Bay headed the Ropewalkers' Guild for twenty-two years.
    He is remembered for Quarle's cable, a tarred hawser laid up from three strands of three
    strands, which held ships at anchor through storms that snapped ordinary rope. Quarle was also
    a generous patron of the town's almshouses, and a street near the harbour still bears his
    name.""",
    """
    Tobiah Quarle | from | Kestrel Bay
    Tobiah Quarle | head of | Ropewalkers' Guild
    Tobiah Quarle | invented | Quarle's cable
    """)

doc("bio-meribel-osk", "Meribel Osk", "biographies", "captain sailor",
    """Meribel Osk (1523-1590), a fisherman's daughter from Tull, went to sea at twelve and became
    the most celebrated captain of her age. For thirty years she commanded the brig Heron's Wake
    on the northern routes. During the Great Gale of 1561 she brought the Heron's Wake and all her
    crew safely into Kestrel Bay while eleven other ships were lost. The Tide Council awarded her a
    silver oar for the feat.""",
    """
    Meribel Osk | born in | Tull
    Meribel Osk | captained | Heron's Wake
    Meribel Osk | survived | Great Gale of 1561
    """)

doc("bio-corwin-ashby", "Corwin Ashby", "biographies", "clockmaker inventor",
    """Corwin Ashby (1540-1611), a clockmaker of Harl, devised the tide-clock in 1574, an instrument
    that told the state of the tide in any harbour of the islands as easily as an ordinary clock
    tells the hour. He joined the Clockmakers' Fraternity as a boy and rose to be its master.
    Ashby's notebooks, full of gear trains and tide tables, are kept in the fraternity's hall.""",
    """
    Corwin Ashby | from | Harl
    Corwin Ashby | invented | tide-clock
    Corwin Ashby | member of | Clockmakers' Fraternity
    """)

doc("bio-bettany-thrale", "Bettany Thrale", "biographies", "salt-boiler strike-leader",
    """Bettany Thrale (1552-1620) was born in Saltreach and worked the salt pans from childhood. As a
    warden of the Saltboilers' Guild she led the Salt Strike of 1589, when the boilers let their
    fires go out rather than pay a new tax on salt. The strike lasted eleven weeks and ended with
    the tax withdrawn. Thrale later wrote the guild's articles on fair wages.""",
    """
    Bettany Thrale | born in | Saltreach
    Bettany Thrale | member of | Saltboilers' Guild
    Bettany Thrale | led | Salt Strike of 1589
    """)

doc("bio-ivo-kessling", "Ivo Kessling", "biographies", "glassblower inventor",
    """Ivo Kessling (1475-1540) was a glassblower of Kilnsey who, in 1503, first succeeded in melting
    the volcanic ash of Mount Scoria into glass. The result, ember glass, made the fortune of his
    town and of the Glassblowers' Guild. Kessling kept the exact proportions secret until his
    death, passing them only to his two sons and his most trusted apprentice.""",
    """
    Ivo Kessling | from | Kilnsey
    Ivo Kessling | invented | ember glass
    Ivo Kessling | member of | Glassblowers' Guild
    """)

doc("bio-maud-fenwright", "Maud Fenwright", "biographies", "weaver fennick",
    """Maud Fenwright (1431-1502) was born in Fennick and became the best-known weaver the Weavers'
    Sodality ever had. Around 1460 she wove the first length of the Fennick check, which has been
    the island's most famous cloth ever since. She trained more than forty apprentices and, in old
    age, served the sodality as its first woman warden.""",
    """
    Maud Fenwright | born in | Fennick
    Maud Fenwright | member of | Weavers' Sodality
    Maud Fenwright | created | Fennick check
    """)

doc("bio-edric-sallow", "Edric Sallow", "biographies", "shipwright carrow",
    """Edric Sallow (1395-1461) was master of the Shipwrights' Guild at Carrow for a quarter of a
    century. In 1432 he built the Dauntless Mary, the first three-masted ship ever launched in the
    Skerrows, and proved that island oak could make hulls as large as any in the world. His method
    of scarfing keel timbers was taught in Carrow for two hundred years.""",
    """
    Edric Sallow | member of | Shipwrights' Guild
    Edric Sallow | built | Dauntless Mary
    """)

doc("bio-lysander-crail", "Lysander Crail", "biographies", "tidewarden politician",
    """Lysander Crail (1560-1631) was born in Marrowgate and served as Tidewarden from 1601 to 1619,
    the longest term anyone had held. A cautious lawyer by training, he put his name to the Treaty
    of Greywick in 1606 and spent the rest of his term rebuilding the islands' finances. His
    critics called him the Ledger Warden; his admirers pointed out that the treasury was full when
    he left office.""",
    """
    Lysander Crail | born in | Marrowgate
    Lysander Crail | held office | Tidewarden
    Lysander Crail | signed | Treaty of Greywick
    """)

doc("bio-petronella-gask", "Petronella Gask", "biographies", "physician dunmarrow",
    """Petronella Gask (1561-1630), a physician born in Blackfen, fought the Fen Fever of 1598 for
    five months without rest, moving from village to village with a barge full of medicines. Her
    book, Remedies of the Fen, describes the herbs she used and the boiling of drinking water,
    which she insisted upon long before others saw the point. In 1600 she founded the infirmary at
    Wrenhollow.""",
    """
    Petronella Gask | born in | Blackfen
    Petronella Gask | fought | Fen Fever of 1598
    Petronella Gask | wrote | Remedies of the Fen
    Petronella Gask | founded infirmary at | Wrenhollow
    """)

doc("bio-odo-brisk", "Odo Brisk", "biographies", "distiller brandy",
    """Odo Brisk (1499-1562) grew up in Sorrel Point and made his living as a cooper until, in 1530,
    he set up a still at Vintner's Rest and made the first cloudpear brandy. Within a decade the
    spirit was being drunk in every tavern of the Skerrows. Brisk was a cheerful, round man who
    liked to say that he had found a way to keep the summer in a bottle.""",
    """
    Odo Brisk | grew up in | Sorrel Point
    Odo Brisk | invented | cloudpear brandy
    Odo Brisk | worked in | Vintner's Rest
    """)

doc("bio-wenna-holt", "Wenna Holt", "biographies", "beekeeper inventor",
    """Wenna Holt (1533-1601) of Thistledown joined the Hivewardens' Guild at sixteen and became the
    most inventive beekeeper of her day. The Holt skep, her design of coiled straw with a removable
    cap, let keepers take honey without destroying the colony, and it spread to every island within
    her lifetime. She kept more than two hundred hives on the downs.""",
    """
    Wenna Holt | from | Thistledown
    Wenna Holt | member of | Hivewardens' Guild
    Wenna Holt | invented | Holt skep
    """)

doc("bio-jory-caddock", "Jory Caddock", "biographies", "pilot navigation",
    """Jory Caddock (1546-1612) was a fisherman from Tull who became the most trusted pilot of the
    Gullet. The Honourable Company of Pilots admitted him in 1571, and over the next forty years he
    sounded every fathom of the strait. The hidden rocks at its eastern end, which he was the first
    to chart, are still called Caddock's Teeth. He is said to have guided more than three thousand
    ships through without a single loss.""",
    """
    Jory Caddock | from | Tull
    Jory Caddock | member of | Honourable Company of Pilots
    Jory Caddock | charted | Caddock's Teeth
    """)

doc("bio-rosalind-teague", "Rosalind Teague", "biographies", "dyer cindermouth",
    """Rosalind Teague (1590-1662) was a dyer of Cindermouth who perfected mereweed crimson, the deep
    red that made Saffra Key's dye trade famous. Before her work the colour faded within a season;
    after it, cloth dyed in Cindermouth kept its red for a lifetime. In 1621 she exposed the
    merchants who had been selling madder-dyed cloth as true crimson, a scandal that shook the
    Crimson Fair.""",
    """
    Rosalind Teague | from | Cindermouth
    Rosalind Teague | perfected | mereweed crimson
    Rosalind Teague | exposed fraud at | Crimson Fair
    """)

doc("bio-silas-vantreight", "Silas Vantreight", "biographies", "merchant port-vell",
    """Silas Vantreight (1602-1670) was a merchant of Port Vell who founded the Vantreight Trading
    House and grew rich carrying ember glass, brandy and dye to the mainland markets. His flagship,
    the Gilded Tern, was the largest merchant vessel in the Skerrows. Vantreight sat on the Tide
    Council for two terms and paid for the rebuilding of the Port Vell fish market.""",
    """
    Silas Vantreight | from | Port Vell
    Silas Vantreight | owned | Gilded Tern
    Silas Vantreight | founded | Vantreight Trading House
    """)

doc("bio-fitch-abernant", "Fitch Abernant", "biographies", "explorer navigator",
    """Fitch Abernant (1508-1566) was born in Orrin's Landing and grew up on tales of Orrin Skelt. In
    1541 he sailed the Wayfinder south beyond the last reef to the Farther Shoals, a scatter of
    sandbanks no islander had visited, and returned with charts, strange shells and a chest of
    ambergris. He made four more voyages but never went so far again.""",
    """
    Fitch Abernant | born in | Orrin's Landing
    Fitch Abernant | sailed | Wayfinder
    Fitch Abernant | reached | Farther Shoals
    """)

doc("bio-mattias-quell", "Mattias Quell", "biographies", "vintner orchard",
    """Mattias Quell (1526-1593) was a vintner and orchard keeper from Vintner's Rest who, in 1558,
    began the Pear Crowning to give thanks for a harvest that had nearly failed. He also bred the
    late-ripening cloudpear variety still called Quell's Gold. His account books, which record
    every barrel he sold for forty years, are a treasured source for historians of Quillon.""",
    """
    Mattias Quell | from | Vintner's Rest
    Mattias Quell | founded | Pear Crowning
    Mattias Quell | bred | Quell's Gold
    """)

doc("bio-griselda-mawn", "Griselda Mawn", "biographies", "diarist eruption",
    """Griselda Mawn (1567-1640) kept a bathhouse at Emberly for most of her life. Her diary, written
    in a cramped hand in a ledger meant for accounts, is the only eyewitness record of the
    eruption of Mount Scoria in 1602: she describes the sky turning black at noon, the roar of the
    mountain and the long nights of falling ash. The diary is now kept in the Tidehall Academy.""",
    """
    Griselda Mawn | lived in | Emberly
    Griselda Mawn | witnessed | eruption of Mount Scoria
    """)

doc("bio-anselm-tarry", "Anselm Tarry", "biographies", "millwright mossbank",
    """Anselm Tarry (1455-1520) was a millwright of Mossbank who, in 1490, built the first
    water-powered sawmill in the islands on the River Braid. Before his mill, every plank in Lantry
    was cut by hand in saw pits. Tarry's mill could do the work of twenty sawyers, and within a
    generation the valley was lined with copies. He is buried beneath the floor of the mill he
    built.""",
    """
    Anselm Tarry | from | Mossbank
    Anselm Tarry | built sawmill on | River Braid
    """)

doc("bio-yorick-bastable", "Yorick Bastable", "biographies", "mason builder",
    """Yorick Bastable (1535-1603), a master mason born in Palisade, spent his life building in stone
    on Saffra Key. He rebuilt the walls of Palisade and, between 1562 and 1568, raised Hookstone
    Light on the rocks beyond the reef, lowering every block from a timber crane mounted on a hulk.
    He carved his mark, a small anchor inside a circle, on the lintel of the keeper's door.""",
    """
    Yorick Bastable | born in | Palisade
    Yorick Bastable | built | Hookstone Light
    Yorick Bastable | built walls of | Palisade
    """)

doc("bio-quintus-fray", "Quintus Fray", "biographies", "glassblower founder",
    """Quintus Fray (1431-1499) was born in Ashgrove and learned glassblowing in the small furnaces
    that once stood on the slopes of Mount Scoria. In 1470 he moved to Kilnsey and set up the
    Glassblowers' Guild with six other masters, giving the town's scattered workshops common
    prices and a common seal. He made window glass, bottles and, late in life, the first lenses
    ground in the islands.""",
    """
    Quintus Fray | born in | Ashgrove
    Quintus Fray | founded | Glassblowers' Guild
    """)

doc("bio-rhodri-vane", "Rhodri Vane", "biographies", "weaver inventor",
    """Rhodri Vane (1598-1667) was born in Fennick and presided over the Weavers' Sodality for thirty
    years. In 1630 he introduced the Vane loom, a broad loom worked by two weavers side by side,
    which doubled the width of the cloth Fennick could produce. Vane also fought, and won, a long
    dispute with the Tide Council over the export duty on wool.""",
    """
    Rhodri Vane | born in | Fennick
    Rhodri Vane | led | Weavers' Sodality
    Rhodri Vane | invented | Vane loom
    """)

doc("bio-clemency-rook", "Clemency Rook", "biographies", "lampwright greywick",
    """Clemency Rook (1600-1672) was born in Greywick, the daughter of a lamp-oil seller. In 1641 the
    Lampwrights' Guild admitted her as a master, the first woman to hold that rank, after she
    presented a brass harbour lantern with a reflecting hood of her own improved pattern. She later
    trained the guild's apprentices and wrote a short treatise on the cleaning of lighthouse
    lamps.""",
    """
    Clemency Rook | born in | Greywick
    Clemency Rook | member of | Lampwrights' Guild
    """)

doc("bio-hesper-lowrie", "Hesper Lowrie", "biographies", "surveyor chartmaker",
    """Hesper Lowrie (1572-1645), born in Amberlow, was the finest surveyor the Chartmakers' Hall
    produced after its founder. Between 1607 and 1611 she surveyed Dunmarrow on foot and by punt,
    mapping every channel, reed bed and causeway of that bewildering island. The Lowrie Survey, in
    twelve sheets, was the first map of Dunmarrow accurate enough to navigate by.""",
    """
    Hesper Lowrie | born in | Amberlow
    Hesper Lowrie | member of | Chartmakers' Hall
    Hesper Lowrie | surveyed | Dunmarrow
    """)

doc("bio-sabine-corrow", "Sabine Corrow", "biographies", "captain smuggler",
    """Sabine Corrow (1541-1609) of Sorrel Point captained the Lissom Queen for twenty years. During
    the Salt Strike of 1589, when Tide Council cutters closed the harbours of Ostrel, she slipped
    through the Gullet by night with cargoes of grain for the strikers' families. She was fined,
    briefly imprisoned and afterwards became something of a folk hero in Saltreach.""",
    """
    Sabine Corrow | from | Sorrel Point
    Sabine Corrow | captained | Lissom Queen
    Sabine Corrow | ran blockade during | Salt Strike of 1589
    """)

doc("bio-tiberius-gull", "Tiberius Gull", "biographies", "merchant peat",
    """Tiberius Gull (1505-1570) was a peat merchant of Dunmarrow Quay who made a fortune shipping
    fuel to the salt boilers of Ostrel. In 1546 he paid for a causeway of timber and stone across
    the bogs to Blackfen, so that carts could reach the quay in any season. The Gull Causeway,
    repaired many times, is still in use.""",
    """
    Tiberius Gull | from | Dunmarrow Quay
    Tiberius Gull | built causeway to | Blackfen
    Tiberius Gull | paid for | Gull Causeway
    """)

doc("bio-ulla-brenning", "Ulla Brenning", "biographies", "shipwright inventor",
    """Ulla Brenning (1560-1628) was born in Mossbank and trained at Carrow in the Shipwrights'
    Guild, where she rose to master builder. Her Brenning keel, deeper and narrower than the old
    island keels, let ships hold a course close to the wind; it was first used on a pilot cutter
    and soon on every fast hull in the islands.""",
    """
    Ulla Brenning | born in | Mossbank
    Ulla Brenning | member of | Shipwrights' Guild
    Ulla Brenning | invented | Brenning keel
    """)

doc("bio-kit-marram", "Kit Marram", "biographies", "poet tull",
    """Kit Marram (1594-1650) was born in Tull, the son of a sprat fisher, and became the best-loved
    poet of the Skerrows. His collection The Salt Psalms, published in 1629, gives voice to
    boilers, fishermen and widows in plain island speech. Marram spent his last years in Port Vell,
    where he taught rhetoric at the Tidehall Academy.""",
    """
    Kit Marram | born in | Tull
    Kit Marram | wrote | The Salt Psalms
    Kit Marram | taught at | Tidehall Academy
    """)

doc("bio-lavinia-drowse", "Lavinia Drowse", "biographies", "diver wrenhollow",
    """Lavinia Drowse (1611-1683) of Wrenhollow was the most famous diver of her time, able to stay
    under for the space of two hundred heartbeats. She explored the Drowned Orchard again and
    again, mapping its rows, and raised cargo from wrecks along the southern reefs. In old age she
    taught the children of Wrenhollow to swim.""",
    """
    Lavinia Drowse | from | Wrenhollow
    Lavinia Drowse | explored | Drowned Orchard
    """)

doc("bio-juno-starkweather", "Juno Starkweather", "biographies", "tidewarden education",
    """Juno Starkweather (1530-1598), born in Port Vell, was the first woman elected Tidewarden,
    serving from 1566 to 1580. Her great project was education: in 1570 she opened the Tidehall
    Academy, persuading the Tide Council to hand over an empty customs house for the purpose. She
    also began the practice of publishing the Council's accounts each year.""",
    """
    Juno Starkweather | born in | Port Vell
    Juno Starkweather | held office | Tidewarden
    Juno Starkweather | founded | Tidehall Academy
    """)

doc("bio-perpetua-lisle", "Perpetua Lisle", "biographies", "clockmaker port-vell",
    """Perpetua Lisle (1619-1694) was born in Port Vell and apprenticed to a clockmaker at eleven.
    She belonged to the Clockmakers' Fraternity for over fifty years. Her greatest work is the
    great clock in the dome of the Tide Council hall, completed in 1662, which shows the hour, the
    phase of the moon and the height of the tide at Port Vell on a single painted dial.""",
    """
    Perpetua Lisle | born in | Port Vell
    Perpetua Lisle | member of | Clockmakers' Fraternity
    Perpetua Lisle | built | great clock
    """)

doc("bio-idris-penhallow", "Idris Penhallow", "biographies", "soldier marrowgate",
    """Idris Penhallow (1489-1544) was born in Marrowgate and commanded its keep during the Siege of
    Marrowgate in 1527. For nineteen days his small garrison held the walls against an army many
    times its size, until the Tide Council's galleys arrived from Port Vell. He was made warden of
    the keep for life and is buried in its chapel.""",
    """
    Idris Penhallow | born in | Marrowgate
    Idris Penhallow | commanded during | Siege of Marrowgate
    """)

doc("bio-benedek-harrow", "Benedek Harrow", "biographies", "drover brannoch",
    """Benedek Harrow (1420-1490) was a drover born in Holloway Cross who spent forty summers walking
    sheep and cattle across Brannoch. He is remembered for persuading the island's landowners to
    keep the drove roads open as common ways, a right that islanders still defend. A stone trough
    he paid for still stands by the road to Fennick.""",
    """
    Benedek Harrow | born in | Holloway Cross
    """)

doc("bio-wystan-pell", "Wystan Pell", "biographies", "road-builder brannoch",
    """Wystan Pell (1483-1550) of Holloway Cross was a road builder who, between 1515 and 1519, laid
    the Moor Road across Tarrow Moor to the north coast of Brannoch. The road is raised on a bank of
    stones above the bog and marked every furlong by a tall standing post, so that travellers can
    follow it even in mist. Before it was built, the crossing took two days; afterwards, a single
    morning.""",
    """
    Wystan Pell | from | Holloway Cross
    Wystan Pell | built | Moor Road
    Wystan Pell | built road across | Tarrow Moor
    """)

doc("bio-xanthe-morrow", "Xanthe Morrow", "biographies", "painter ashgrove",
    """Xanthe Morrow (1604-1681) was born in Ashgrove two years after the eruption and grew up among
    its ruins. As a painter she is known above all for the Burning Mountain panels, six large
    pictures of the eruption composed from the diary of Griselda Mawn and the memories of
    survivors. The panels hang in the hall of the Tide Council.""",
    """
    Xanthe Morrow | born in | Ashgrove
    Xanthe Morrow | painted | Burning Mountain panels
    """)

doc("bio-tamsin-orley", "Tamsin Orley", "biographies", "lighthouse-keeper rescue",
    """Tamsin Orley (1615-1690) was born in Palisade and kept Hookstone Light for forty-one years,
    trimming its wick every hour of every night. In the storm of 1648 she rowed out alone to the
    reef and brought back five survivors from the wreck of the Morwen, making three trips through
    breaking surf. The Tide Council paid her a pension for life, which she spent on oil for the
    lamp.""",
    """
    Tamsin Orley | born in | Palisade
    Tamsin Orley | keeper of | Hookstone Light
    Tamsin Orley | rescued survivors of | Morwen
    """)

doc("bio-oswin-tarrant", "Oswin Tarrant", "biographies", "salt-boiler founder inventor",
    """Oswin Tarrant (1388-1450) was born in Saltreach and spent his youth tending the open-air salt
    ponds. His brine kettle, a shallow iron pan heated from below by a brick flue, doubled the
    yield of a day's boiling. In 1431 he persuaded the pan owners to found the Saltboilers' Guild,
    and he served as its first warden until his death.""",
    """
    Oswin Tarrant | born in | Saltreach
    Oswin Tarrant | invented | brine kettle
    Oswin Tarrant | founded | Saltboilers' Guild
    """)

doc("bio-zillah-dunmore", "Zillah Dunmore", "biographies", "eel-catcher inventor",
    """Zillah Dunmore (1587-1660) of Blackfen caught eels for her living and, around 1620, devised
    the Dunmore trap: a long wicker cone with two inner funnels, so that an eel could swim in easily
    but never find its way out. The design doubled the catch of the fen villages. She refused every
    offer to sell the rights and taught the weave to anyone who asked.""",
    """
    Zillah Dunmore | from | Blackfen
    Zillah Dunmore | invented | Dunmore trap
    """)

doc("bio-nell-cobbold", "Nell Cobbold", "biographies", "ropemaker guild-master",
    """Nell Cobbold (1577-1650) of Kestrel Bay was master of the Ropewalkers' Guild when fire
    destroyed its ropewalk in 1609. She raised the money for a new one within a year, partly by
    pawning her own house, and built it of stone instead of timber. The guild elected her master
    three more times, and her portrait hangs in the new ropewalk's gatehouse.""",
    """
    Nell Cobbold | from | Kestrel Bay
    Nell Cobbold | master of | Ropewalkers' Guild
    """)

doc("bio-verity-stoake", "Verity Stoake", "biographies", "chandler candles",
    """Verity Stoake (1622-1688) was a chandler of Thistledown who made the finest beeswax candles in
    the Skerrows. For twenty years she held the contract to light the chamber of the Tide Council,
    and her candles, dipped forty times and scented faintly with heather, were said to burn a full
    night without smoking. She was a member of the Hivewardens' Guild and kept her own bees on the
    downs.""",
    """
    Verity Stoake | from | Thistledown
    Verity Stoake | member of | Hivewardens' Guild
    Verity Stoake | supplied candles to | Tide Council
    """)

doc("bio-orrin-skelt", "Orrin Skelt", "biographies", "navigator founder legend",
    """Orrin Skelt is the navigator honoured as the founder of the island settlements. According to
    the oldest songs, he sailed from the mainland in 1211 with nineteen families aboard an open
    boat, steering by the stars, and ran ashore on the northern beach of Saffra Key. Little more is
    known of him, but nearly every island family claims descent from one of his crew.""",
    """
    Orrin Skelt | landed on | Saffra Key
    Orrin Skelt | arrived in | 1211
    """)

doc("bio-bartholomew-inch", "Bartholomew Inch", "biographies", "mint coinage",
    """Bartholomew Inch (1420-1481) was master of the Port Vell mint and struck the first silver mark
    in 1455, giving the islands a coin of their own after two centuries of trading in mainland
    money. Each mark bore a wave on one face and the eight stars of the islands on the other. Inch
    was notoriously honest; when a batch came out light, he melted it down at his own cost.""",
    """
    Bartholomew Inch | master of | Port Vell mint
    Bartholomew Inch | struck | silver mark
    """)

doc("bio-hugo-quarrendel", "Hugo Quarrendel", "biographies", "reeve lantern-war",
    """Hugo Quarrendel (1570-1630) was reeve of Greywick during the Lantern War. When the Tide
    Council raised the duty on lamp oil in 1603, he refused to collect it, barred the town gates to
    the Council's officers and organised the lampwrights to hold the harbour. After three years of
    blockade and skirmishing he negotiated the peace himself, and he was reeve again within a
    year.""",
    """
    Hugo Quarrendel | reeve of | Greywick
    Hugo Quarrendel | leader in | Lantern War
    """)

doc("bio-ottilie-brand", "Ottilie Brand", "biographies", "harbourmaster quarantine",
    """Ottilie Brand (1590-1655) was harbourmaster of Sorrel Point during the quarantine of 1625. When
    a grain ship arrived carrying the spotted fever, she ordered the port closed, moored the ship
    in the outer roads and had food rowed out to its crew for forty days. The fever never came
    ashore, and the quarantine became the model for every island harbour.""",
    """
    Ottilie Brand | harbourmaster of | Sorrel Point
    Ottilie Brand | ordered | quarantine of 1625
    """)

doc("bio-dorian-fleet", "Dorian Fleet", "biographies", "physician author",
    """Dorian Fleet (1596-1660) was a physician who settled in Emberly and spent thirty years studying
    its springs. He measured their heat with a thermometer of his own making, recorded which
    ailments improved in which pools and wrote The Waters of Emberly, the first medical book
    printed in the islands. He ran his practice from a bathhouse once owned by Griselda Mawn.""",
    """
    Dorian Fleet | lived in | Emberly
    Dorian Fleet | wrote | The Waters of Emberly
    """)

doc("bio-ambrose-kell", "Ambrose Kell", "biographies", "shipwright carrow",
    """Ambrose Kell (1588-1659) was a master builder of Carrow who designed and built the Gilded
    Tern, the largest carrack ever launched in the Skerrows. He was known for his cautious, heavily
    framed hulls and for refusing to launch any ship on a Friday. Kell trained two generations of
    shipwrights and left his drawings to the Shipwrights' Guild.""",
    """
    Ambrose Kell | built | Gilded Tern
    Ambrose Kell | member of | Shipwrights' Guild
    """)

doc("bio-hal-treen", "Hal Treen", "biographies", "shipwright teacher",
    """Hal Treen (1530-1601) was a master builder of Carrow whose yard turned out fishing smacks,
    pilot cutters and, in 1576, a new hull for the Council galley Warden's Pride. He took on Ulla
    Brenning as his apprentice in 1575 against the advice of the guild, and lived to see her
    designs outsell his own. He is buried beside the slipway he worked for fifty years.""",
    """
    Hal Treen | rebuilt | Warden's Pride
    Hal Treen | trained | Ulla Brenning
    """)

doc("bio-gideon-marsh", "Gideon Marsh", "biographies", "tidewarden tax",
    """Gideon Marsh (1541-1604) of Port Vell was Tidewarden from 1584 to 1592. Faced with a treasury
    emptied by the cost of new lights, he imposed a tax on every sack of salt leaving Ostrel,
    provoking the Salt Strike of 1589. He withdrew the tax after eleven weeks and was never again
    trusted by the northern islands, though his lights still stand.""",
    """
    Gideon Marsh | held office | Tidewarden
    Gideon Marsh | provoked | Salt Strike of 1589
    """)

doc("bio-elspeth-crane", "Elspeth Crane", "biographies", "lighthouse-keeper vell-sound",
    """Elspeth Crane (1495-1570) kept the Vell Sound beacon for more than forty years. In 1523 she
    became the first keeper to work a light fitted with a reflecting hood, and her careful notes on
    the polishing of the silvered bowl were copied into the rules of every later lighthouse.
    Sailors coming home to Port Vell said they could tell her light from any other by its
    steadiness.""",
    """
    Elspeth Crane | keeper of | Vell Sound beacon
    """)

doc("bio-cassius-wold", "Cassius Wold", "biographies", "engraver charts",
    """Cassius Wold (1478-1544) was the copper engraver who cut the sixteen plates of the Great
    Chart under the direction of Ysolde Marrick. Trained as a goldsmith in Port Vell, he had never
    seen a chart before he began, and he spent his first year simply learning to cut a clean
    coastline. His tiny signature, a W inside a compass rose, hides in the corner of plate nine.""",
    """
    Cassius Wold | engraved | Great Chart
    Cassius Wold | worked for | Ysolde Marrick
    """)

# =============================================================================
# Ship registry
# =============================================================================

doc("shp-herons-wake", "Heron's Wake", "ship-registry", "ship brig",
    """The Heron's Wake was a two-masted brig of ninety tons, launched at Carrow in 1549 and entered
    in the registry under the hull mark HX-47. Fast, dry and forgiving in a following sea, she
    carried wool, salt and passengers on the northern routes for more than forty years. She
    survived the Great Gale of 1561 with the loss of only her foretopmast and was finally laid up
    in 1593.""",
    """
    Heron's Wake | built at | Carrow
    Heron's Wake | hull mark | HX-47
    Heron's Wake | launched in | 1549
    Heron's Wake | survived | Great Gale of 1561
    """)

doc("shp-gilded-tern", "Gilded Tern", "ship-registry", "ship carrack wreck",
    """The Gilded Tern was a carrack of three hundred tons, launched at Carrow in 1628, and for two
    decades the largest trading ship in the islands. In the winter of 1651, outward bound with a
    cargo of ember glass and brandy, she struck the Hookstone reef in a snowstorm and went down with
    eleven of her crew. Parts of her hull can still be seen at the lowest tides.""",
    """
    Gilded Tern | built at | Carrow
    Gilded Tern | wrecked on | Hookstone reef
    Gilded Tern | sank in | 1651
    """)

doc("shp-wayfinder", "Wayfinder", "ship-registry", "ship caravel exploration",
    """The Wayfinder was a small caravel of sixty tons with lateen sails on two masts, built at
    Sorrel Point in 1538 for exploring the southern waters. She drew so little water that she could
    cross reefs where larger ships would ground. After her famous run to the Farther Shoals in 1541
    she served as a survey ship for the Chartmakers' Hall until she was lost with all hands in
    1563.""",
    """
    Wayfinder | built at | Sorrel Point
    Wayfinder | tonnage | sixty tons
    Wayfinder | reached | Farther Shoals
    """)

doc("shp-lissom-queen", "Lissom Queen", "ship-registry", "ship schooner",
    """The Lissom Queen was a topsail schooner built at Sorrel Point in 1580, narrow in the beam and
    very fast off the wind. She spent her working life running cloudpears and brandy from Quillon to
    Port Vell, and once, famously, grain through the Gullet during the Salt Strike. Her figurehead,
    a crowned woman holding a pear, is preserved in the Sorrel Point harbour office.""",
    """
    Lissom Queen | built at | Sorrel Point
    Lissom Queen | type | topsail schooner
    """)

doc("shp-dauntless-mary", "Dauntless Mary", "ship-registry", "ship three-master",
    """The Dauntless Mary, launched at Carrow in 1432, was the first three-masted ship built in the
    Skerrow Isles. She carried the Tide Council's envoys to the mainland courts for three decades
    and was the wonder of every harbour she entered. Worn out at last, she was towed to Dunmarrow
    Quay in 1480 and broken up; her mainmast still stands as a flagpole on the quay.""",
    """
    Dauntless Mary | built at | Carrow
    Dauntless Mary | broken up at | Dunmarrow Quay
    Dauntless Mary | broken up in | 1480
    """)

doc("shp-morwen", "Morwen", "ship-registry", "ship ketch wreck",
    """The Morwen was a herring ketch out of Tull, owned jointly by three families of the village.
    Caught by a southerly storm in 1648 far from her usual grounds, she was driven onto the
    Hookstone reef and broke apart within the hour. Five of her nine men were brought off alive; her
    name board, washed up a week later, hangs in the chapel at Tull.""",
    """
    Morwen | home port | Tull
    Morwen | wrecked on | Hookstone reef
    Morwen | wrecked in | 1648
    """)

doc("shp-saltbearer", "Saltbearer", "ship-registry", "barge salt",
    """The Saltbearer is the flat-bottomed barge of the Saltboilers' Guild, built to carry sacks of
    salt down the creeks from Saltreach to deep water. She has been rebuilt so many times that not a
    plank of the original remains, but her name, her tarred black hull and her single brown sail
    have been the same since 1460.""",
    """
    Saltbearer | owned by | Saltboilers' Guild
    Saltbearer | sails from | Saltreach
    """)

doc("shp-brannoch-belle", "Brannoch Belle", "ship-registry", "ship wool",
    """The Brannoch Belle was a bluff-bowed wool hoy that plied between Kestrel Bay and Port Vell from
    1590 until 1634. Her hold could take four hundred bales of Brannoch fleece, and her crew were
    paid partly in cloth. Sailors joked that she was the only ship in the islands that could be
    smelled before she was seen.""",
    """
    Brannoch Belle | sailed between | Kestrel Bay
    Brannoch Belle | carried | Brannoch fleece
    """)

doc("shp-cinder-wren", "Cinder Wren", "ship-registry", "ship sloop glass",
    """The Cinder Wren is a small, beamy sloop that carries ember glass from Kilnsey to Port Vell.
    Her hold is lined with sheep's wool and divided into padded stalls so that no crate can shift in
    a seaway. Registered under the hull mark KW-9, she has made the crossing more than two thousand
    times, and in all that time, her owners boast, not a single pane has cracked.""",
    """
    Cinder Wren | sails from | Kilnsey
    Cinder Wren | carries | ember glass
    Cinder Wren | hull mark | KW-9
    """)

doc("shp-skerrow-lark", "Skerrow Lark", "ship-registry", "ship packet mail",
    """The Skerrow Lark was the Tide Council's packet boat, carrying letters, coin and passengers
    between Port Vell and Kestrel Bay twice a week from 1602. A bell was rung on Port Vell quay an
    hour before she sailed. She was replaced in 1655 by a larger boat of the same name, so that
    islanders still speak of taking the Lark.""",
    """
    Skerrow Lark | sailed between | Port Vell
    Skerrow Lark | owned by | Tide Council
    """)

doc("shp-wardens-pride", "Warden's Pride", "ship-registry", "galley warship",
    """The Warden's Pride was the oared galley of the Tide Council, a long, low vessel of thirty-two
    oars kept at Port Vell for the defence of the islands. Her most famous service came in 1527,
    when she led the relief squadron that broke the Siege of Marrowgate. She was rebuilt twice and
    finally retired in 1590.""",
    """
    Warden's Pride | based at | Port Vell
    Warden's Pride | relieved | Siege of Marrowgate
    """)

# =============================================================================
# Almanac: inventions, goods, coin and books
# =============================================================================

doc("alm-storm-lantern", "The storm lantern", "almanac", "invention lamps",
    """The storm lantern of the islands is a tall tin lantern with a glass chimney, a double cowl and
    a wick that draws its air from below. Devised by Aldous Prane around 1409, it will stay alight
    in a gale that would blow out any open flame. Every lantern made by the Lampwrights' Guild still
    carries a pattern stamp; Prane's original design is stamped LW-3.""",
    """
    storm lantern | invented by | Aldous Prane
    storm lantern | pattern stamp | LW-3
    """)

doc("alm-reflecting-hood", "The reflecting hood", "almanac", "invention lighthouses",
    """A reflecting hood is a bowl of silvered copper, shaped like the inside of a spoon, set behind
    the lamp of a lighthouse. It gathers the light that would otherwise spill upward and sideways
    and throws it out over the water as a concentrated beam. First produced in 1521, the hood
    multiplied the range of island lights several times over and was fitted to Hookstone Light when
    it was built.""",
    """
    reflecting hood | made of | silvered copper
    reflecting hood | first produced in | 1521
    reflecting hood | fitted to | Hookstone Light
    """)

doc("alm-tide-clock", "The tide-clock", "almanac", "invention clocks",
    """A tide-clock shows the state of the tide rather than the hour. Inside its case a float rides
    in a small cistern of seawater that is topped up through a pipe from the harbour, and the
    float's rise and fall turns a pointer across a painted dial marked with the tide heights. The
    first was made at Harl in 1574, and by 1600 every harbour office in the islands had one. Its
    patent roll entry is TC-1574.""",
    """
    tide-clock | worked by | seawater
    tide-clock | first made at | Harl
    tide-clock | patent roll entry | TC-1574
    """)

doc("alm-holt-skep", "The Holt skep", "almanac", "invention bees",
    """The Holt skep is a beehive of coiled straw bound with split bramble, with a removable straw cap
    at the top. When the cap is lifted, the honeycomb built into it can be taken away and a fresh
    cap set in place without harming the colony below. Before it, keepers had to kill the bees with
    sulphur smoke to take their honey.""",
    """
    Holt skep | made of | coiled straw
    """)

doc("alm-quarles-cable", "Quarle's cable", "almanac", "invention rope",
    """Quarle's cable is a heavy anchor rope made by laying three ropes, each of three strands,
    together against their twist and soaking the whole in hot pine tar. It is stiff and ugly and
    almost impossible to break. Ships of the islands began carrying it after 1548, and insurance
    brokers at Port Vell gave lower rates to any vessel that did.""",
    """
    Quarle's cable | soaked in | pine tar
    Quarle's cable | adopted after | 1548
    """)

doc("alm-dunmore-trap", "The Dunmore trap", "almanac", "invention eels",
    """The Dunmore trap is a wicker eel trap shaped like a long cone, with two narrowing funnels
    inside. Set in a fen channel with its mouth facing downstream, it catches eels as they run at
    night. The traps are woven from green willow each autumn and last a single season.""",
    """
    Dunmore trap | made of | green willow
    Dunmore trap | catches | eels
    """)

doc("alm-vane-loom", "The Vane loom", "almanac", "invention weaving",
    """The Vane loom is a broad handloom wide enough for two weavers to sit side by side, throwing the
    shuttle between them. Introduced at Fennick in 1630, it produced cloth of double width, which
    made blankets and sails far cheaper. The sodality allowed only licensed workshops to use it, and
    each licensed loom bore a numbered brass plate.""",
    """
    Vane loom | introduced at | Fennick
    Vane loom | introduced in | 1630
    """)

doc("alm-brenning-keel", "The Brenning keel", "almanac", "invention ships",
    """The Brenning keel is a deep, narrow keel with a sharply raked sternpost, first laid down at
    Carrow in 1597. It lets a ship hold a course much closer to the wind than the shallow keels of
    older island craft. Fast schooners and pilot cutters were the first to use it; within thirty
    years every new hull in the Skerrows had one.""",
    """
    Brenning keel | first laid at | Carrow
    Brenning keel | first laid in | 1597
    """)

doc("alm-brine-kettle", "The brine kettle", "almanac", "invention salt",
    """The brine kettle is a broad, shallow iron pan set over a brick flue, so that heat spreads
    evenly beneath the whole surface of the brine. Introduced at Saltreach in the 1420s, it made the
    salt crystals smaller and whiter than those of the old clay pans. Every boiling house on Ostrel
    still uses a descendant of it.""",
    """
    brine kettle | made of | iron
    brine kettle | introduced at | Saltreach
    """)

doc("alm-ember-glass", "Ember glass", "almanac", "goods glass",
    """Ember glass is a heavy, smoky glass with a deep red-gold colour that seems to glow from within
    when held to a candle. It is made at Kilnsey by melting sand with the fine ash of Mount Scoria,
    and the exact recipe is known only to the masters of the Glassblowers' Guild. Goblets, lamp
    chimneys and window roundels of ember glass are prized across the islands and far beyond.""",
    """
    ember glass | made at | Kilnsey
    ember glass | colour | red-gold
    ember glass | made from | ash of Mount Scoria
    """)

doc("alm-ostrel-grey-salt", "Ostrel grey salt", "almanac", "goods salt",
    """Ostrel grey salt is a coarse, damp sea salt with a faint smoky taste, the result of boiling
    brine over peat fires. Cooks of the islands prefer it for curing fish and hams, and it travels
    to the mainland in oak kegs stamped with the Saltboilers' Guild seal. A keg of grey salt was
    once the standard wage of a month's labour on Ostrel.""",
    """
    Ostrel grey salt | produced on | Ostrel
    Ostrel grey salt | boiled over | peat fires
    Ostrel grey salt | sealed by | Saltboilers' Guild
    """)

doc("alm-brannoch-fleece", "Brannoch fleece", "almanac", "goods wool",
    """Brannoch fleece comes from the black-faced sheep of Tarrow Moor. It is long in the staple,
    springy and warm even when wet, which makes it the wool of choice for sailors' jerseys and
    blankets. The fleeces are washed in the River Merrin and sold at the Shearing Fair in Fennick,
    where a champion fleece can fetch as much as a cow.""",
    """
    Brannoch fleece | comes from | Tarrow Moor
    Brannoch fleece | sold at | Shearing Fair
    """)

doc("alm-cloudpear-brandy", "Cloudpear brandy", "almanac", "goods brandy",
    """Cloudpear brandy is distilled at Vintner's Rest from the fermented juice of Quillon's
    cloudpears. The clear young brandy is set to rest for seven winters in casks of Lantry oak,
    which give it an amber colour and a taste of vanilla and smoke. A bottle is opened at every
    island wedding, and sailors carry a flask as a cure for everything.""",
    """
    cloudpear brandy | distilled at | Vintner's Rest
    cloudpear brandy | aged in | casks of Lantry oak
    """)

doc("alm-mereweed-crimson", "Mereweed crimson", "almanac", "goods dye",
    """Mereweed crimson is a deep red dye pressed from mereweed, a feathery red seaweed that grows in
    the warm lagoons of Saffra Key. The pulp is steeped for a month, strained and then fixed into the
    cloth with alum brought from Ember Holm, without which the colour would wash out in a single
    rinse. Good crimson is judged by holding the cloth against the light.""",
    """
    mereweed crimson | made from | mereweed
    mereweed crimson | fixed with | alum
    mereweed | grows on | Saffra Key
    """)

doc("alm-dunmarrow-peat", "Dunmarrow peat", "almanac", "goods fuel",
    """Dunmarrow peat is cut in long black bricks from the bogs of Dunmarrow, dried in stacks through
    the summer and shipped from Dunmarrow Quay. It burns slowly with a sweet, heavy smoke. The salt
    boilers of Ostrel buy most of it, and islanders say you can tell a Dunmarrow hearth by the smell
    of the clothes of the people who sit by it.""",
    """
    Dunmarrow peat | shipped from | Dunmarrow Quay
    Dunmarrow peat | bought by | salt boilers
    """)

doc("alm-smoked-eel", "Smoked Blackfen eel", "almanac", "goods food",
    """Smoked Blackfen eel is the great delicacy of Dunmarrow. The eels are caught in wicker traps,
    gutted, salted overnight and hung for three days in smokehouses fired with alder and peat. The
    finished eel is golden brown and rich enough that a single slice on dark bread makes a meal. It
    is the centrepiece of the Eel Supper each November.""",
    """
    Smoked Blackfen eel | smoked with | alder
    Smoked Blackfen eel | served at | Eel Supper
    """)

doc("alm-lantry-oak", "Lantry oak", "almanac", "goods timber",
    """Lantry oak grows slowly on the cold, wet hills of Lantry and is closer in the grain than any
    other timber in the islands. Shipwrights prize it for keels and frames, and coopers for brandy
    casks. Trees are marked for felling by the foresters of the Shipwrights' Guild, and none may be
    cut before its hundredth year.""",
    """
    Lantry oak | grows on | Lantry
    Lantry oak | used for | brandy casks
    """)

doc("alm-heather-honey", "Heather honey", "almanac", "goods honey",
    """Heather honey from Thistledown is dark amber, thick enough to hold a spoon upright and faintly
    bitter, with a smell of the open downs. Because it sets like jelly in the comb, it must be
    pressed rather than drained. It is sold by the Hivewardens' Guild at the Honey Moot and used by
    physicians in salves for burns.""",
    """
    heather honey | produced at | Thistledown
    heather honey | sold at | Honey Moot
    """)

doc("alm-sprat-oil", "Sprat oil", "almanac", "goods lamp-oil",
    """Sprat oil is pressed from the small oily fish netted off Ostrel. Boiled and skimmed, it burns
    with a clear yellow flame and little smoke, and for two centuries it was the lamp oil of the
    islands, burning in every lighthouse and most kitchens. The duty placed on it by the Tide
    Council in 1603 started the Lantern War.""",
    """
    sprat oil | used in | lighthouse
    sprat oil | taxed in | 1603
    sprat oil | duty started | Lantern War
    """)

doc("alm-kelp-paper", "Kelp paper", "almanac", "goods paper",
    """Kelp paper is made at Orrin's Landing from seaweed pulp mixed with rag. It is greenish, tough
    and nearly waterproof, which made it the favourite paper of ships' logs and charts. The
    Chartmakers' Hall printed its master charts on kelp paper until 1640, when finer rag paper from
    the mainland became cheap enough to replace it.""",
    """
    kelp paper | made at | Orrin's Landing
    kelp paper | used by | Chartmakers' Hall
    """)

doc("alm-cloudpear", "The cloudpear", "almanac", "goods fruit",
    """The cloudpear is the pale, round, late-ripening pear of Quillon, so named because its skin has
    a whitish bloom like a cloud. Eaten fresh it is sweet and soft; pressed and distilled it becomes
    cloudpear brandy. The finest variety, Quell's Gold, ripens only after the first frost.
    Cloudpear trees need shelter from salt wind and will not fruit on any other island.""",
    """
    cloudpear | grown on | Quillon
    Quell's Gold | variety of | cloudpear
    """)

doc("alm-silver-mark", "The silver mark", "almanac", "coin currency",
    """The silver mark is the coin of the Skerrow Isles, first struck at the Port Vell mint in 1455.
    One face shows a breaking wave, the other the eight stars that stand for the islands. A mark is
    divided into twelve pennies. Clipped or light marks are a serious offence, and the Tide Council
    still keeps a set of standard weights in its hall to test suspect coins.""",
    """
    silver mark | struck at | Port Vell mint
    silver mark | first struck in | 1455
    """)

doc("alm-waters-of-emberly", "The Waters of Emberly", "almanac", "book medicine",
    """The Waters of Emberly, printed in 1641, was the first medical book printed in the Skerrows. It
    describes each of the twelve springs at Emberly, with its heat, taste and smell, and recommends
    which to drink and which to bathe in for rheumatism, gout, weak chests and melancholy. The
    author tested his advice on himself, drinking a pint from every spring daily for a year.""",
    """
    The Waters of Emberly | printed in | 1641
    The Waters of Emberly | describes | Emberly
    """)

doc("alm-orrin-oar", "The Orrin Oar", "almanac", "trophy regatta",
    """The Orrin Oar is the prize of the Founders' Regatta, an old ash-wood oar bound with silver
    bands, each engraved with the name of a winning crew. Tradition says it is the steering oar of
    Orrin Skelt's boat, though the silver bands are only two hundred years old. The winning crew
    keeps it in their island's council house until the next regatta.""",
    """
    Orrin Oar | prize of | Founders' Regatta
    """)

doc("alm-salt-psalms", "The Salt Psalms", "almanac", "book poetry",
    """The Salt Psalms, a book of forty-two poems published at Port Vell in 1629, is the best-loved
    work of island literature. Written in the plain speech of Ostrel, the poems follow a year in the
    life of a salt-boiling village, from the spring scraping of the ponds to the winter storms.
    Schoolchildren still learn 'The Widow at the Pan' by heart.""",
    """
    The Salt Psalms | published in | 1629
    """)

# =============================================================================
# Almanac: festivals
# =============================================================================

doc("alm-lantern-night", "Lantern Night", "almanac", "festival greywick",
    """Lantern Night falls on the longest night of the year in Greywick. At a signal from the
    guildhall bell, every household lights a lantern in its window at the same moment, and the
    lampwrights carry the oldest lanterns of the guild in procession along the harbour wall.
    Children make paper lanterns of their own and float them out on the tide.""",
    """
    Lantern Night | held in | Greywick
    """)

doc("alm-shearing-fair", "The Shearing Fair", "almanac", "festival fennick wool",
    """The Shearing Fair is held at Fennick in the second week of June, when the flocks come down from
    Tarrow Moor. Shearers compete for speed, judges choose the champion fleece, and the wool buyers
    of three islands bid in the market square. The fair ends with a dance on the bridge.""",
    """
    Shearing Fair | held in | Fennick
    Shearing Fair | month | June
    """)

doc("alm-salt-moon", "The Salt Moon", "almanac", "festival saltreach",
    """The Salt Moon is the midsummer festival of Saltreach, held on the full moon nearest the longest
    day when the first salt of the season is raked from the pans. Boilers and their families dance
    on the dykes by torchlight, and a bowl of the new salt is carried to the guild hall to be
    blessed. By custom no boiling fire may be lit that night.""",
    """
    Salt Moon | held in | Saltreach
    """)

doc("alm-pear-crowning", "The Pear Crowning", "almanac", "festival quillon",
    """The Pear Crowning takes place at Sorrel Point on the first Sunday of October. The finest
    cloudpear of the year, chosen by a jury of growers, is set on a cushion and carried through the
    streets beneath a canopy, followed by every orchard family of Quillon. Afterwards the pear is
    crowned with a circlet of vine leaves and auctioned for the poor.""",
    """
    Pear Crowning | takes place at | Sorrel Point
    Pear Crowning | month | October
    """)

doc("alm-eel-supper", "The Eel Supper", "almanac", "festival blackfen",
    """The Eel Supper is Blackfen's November feast, held when the autumn eel run is over and the
    smokehouses are full. Long tables are set up along the causeway, and every family brings a dish
    of eel: smoked, stewed, jellied or baked in pastry. Songs are sung in the old fen dialect, which
    visitors rarely understand.""",
    """
    Eel Supper | held in | Blackfen
    Eel Supper | month | November
    """)

doc("alm-ember-vigil", "The Ember Vigil", "almanac", "festival ashgrove",
    """The Ember Vigil is kept in Ashgrove each year on the anniversary of the 1602 eruption of Mount
    Scoria. Families sit up through the night with lanterns in their windows and bread and salt on
    the table, remembering the dead and giving thanks for the survivors. At dawn the bell of the
    rebuilt chapel rings once for each year since the eruption.""",
    """
    Ember Vigil | held in | Ashgrove
    Ember Vigil | commemorates | eruption of Mount Scoria
    """)

doc("alm-founders-regatta", "The Founders' Regatta", "almanac", "festival port-vell rowing",
    """The Founders' Regatta is raced in the harbour of Port Vell each July to honour the first
    settlers. Crews from all eight islands row painted longboats over a course marked by buoys, and
    the winning crew carries the Orrin Oar for a year. The whole town turns out on the quays, and the
    Tidewarden fires the starting gun.""",
    """
    Founders' Regatta | held in | Port Vell
    Founders' Regatta | month | July
    Founders' Regatta | prize | Orrin Oar
    """)

doc("alm-honey-moot", "The Honey Moot", "almanac", "festival thistledown",
    """The Honey Moot is held at Thistledown every September. Beekeepers bring samples of the season's
    honey to be tasted and graded by the wardens of the Hivewardens' Guild, and the grade decides the
    price for the coming year. The day ends with mead, music and a race in which young men carry
    full skeps across the green.""",
    """
    Honey Moot | held in | Thistledown
    Honey Moot | month | September
    Honey Moot | run by | Hivewardens' Guild
    """)

doc("alm-crimson-fair", "The Crimson Fair", "almanac", "festival cindermouth dye",
    """The Crimson Fair is held at Cindermouth twice a year, in spring and autumn, when the new
    batches of mereweed crimson are ready. Cloth merchants from Brannoch and Hallowmere bid for the
    dye in a tent on the beach, and every bolt on sale must bear the seal of the town's dye
    inspectors. Since the scandal of 1621, the inspectors test each batch with lye before it may be
    sold.""",
    """
    Crimson Fair | held in | Cindermouth
    Crimson Fair | sells | mereweed crimson
    """)

doc("alm-keel-blessing", "The Keel Blessing", "almanac", "festival carrow ships",
    """The Keel Blessing takes place at Carrow each April. A procession of shipwrights, priests and
    children walks down to the slipways carrying green oak boughs, and a cup of seawater is poured
    over every keel laid since the last blessing. Ships built without the blessing are said to be
    unlucky, and few captains will sign on to one.""",
    """
    Keel Blessing | held in | Carrow
    Keel Blessing | month | April
    """)

# =============================================================================
# Chronicles
# =============================================================================

doc("chr-landing-of-orrin-skelt", "The landing of 1211", "chronicles", "settlement founding",
    """In 1211, according to the island chronicles, an open boat carrying nineteen families ran ashore
    on the northern beach of Saffra Key after forty days at sea. Their leader, Orrin Skelt, named the
    place Orrin's Landing. Within a generation the settlers had spread to Hallowmere and Quillon, and
    by 1300 all eight islands were inhabited.""",
    """
    Orrin Skelt | landed at | Orrin's Landing
    Orrin Skelt | named | Orrin's Landing
    """)

doc("chr-founding-tide-council", "The Compact of the Tides", "chronicles", "government founding",
    """After a generation of raids and counter-raids between the islands, delegates from all eight met
    at Port Vell in 1350 and swore the Compact of the Tides. They agreed to settle disputes by vote in
    a common council, to share the cost of lights and harbour defences, and to elect a Tidewarden
    from among themselves. The Tide Council has met without a break ever since.""",
    """
    Compact of the Tides | sworn at | Port Vell
    Compact of the Tides | created | Tide Council
    Tide Council | founded in | 1350
    """)

doc("chr-great-gale-1561", "The Great Gale of 1561", "chronicles", "storm disaster",
    """The Great Gale of 1561 struck the Skerrows on the night of the eleventh of November without
    warning. Winds from the north-west drove heavy seas into every harbour on the northern islands;
    eleven ships were lost with more than two hundred sailors, and the sea broke through the dykes
    at Saltreach. The gale is still used as a yardstick: islanders call any great storm a
    sixty-one.""",
    """
    Great Gale of 1561 | flooded | Saltreach
    Great Gale of 1561 | sank | eleven ships
    """)

doc("chr-siege-of-marrowgate", "The Siege of Marrowgate", "chronicles", "war siege",
    """The Siege of Marrowgate began in the spring of 1527, when a fleet of corsairs from Vask landed
    on Ostrel and surrounded the town. For nineteen days they battered the walls of Marrowgate Keep
    with stone-throwers while the townspeople sheltered inside. The arrival of the Tide Council's
    galleys from Port Vell broke the siege, and the corsairs fled with heavy losses.""",
    """
    Siege of Marrowgate | began in | 1527
    Siege of Marrowgate | laid by | corsairs from Vask
    Siege of Marrowgate | targeted | Marrowgate Keep
    """)

doc("chr-salt-strike-1589", "The Salt Strike of 1589", "chronicles", "strike salt",
    """In 1589 the Tide Council imposed a new tax on every sack of salt leaving Ostrel. The boilers of
    Saltreach answered by letting their fires go out. For eleven weeks no salt was made, the
    Council's cutters closed the harbours, and the fish-curers of every island ran short. The Salt
    Strike of 1589 ended when the Council withdrew the tax and the pans were relit amid bonfires.""",
    """
    Salt Strike of 1589 | took place in | Saltreach
    Salt Strike of 1589 | lasted | eleven weeks
    """)

doc("chr-eruption-mount-scoria", "The eruption of Mount Scoria", "chronicles", "volcano disaster",
    """The eruption of Mount Scoria began at midday on the third of August 1602. A column of black ash
    rose over Ember Holm and fell for three days, burying the lower streets of Ashgrove to the height
    of a man's shoulder. Hot mud swept down the eastern gullies into the sea. Thirty-seven people
    died, most of them in Ashgrove, and the sky over the western islands stayed dark for a week.""",
    """
    eruption of Mount Scoria | buried | Ashgrove
    eruption of Mount Scoria | began in | 1602
    """)

doc("chr-lantern-war", "The Lantern War", "chronicles", "war greywick",
    """The Lantern War of 1603-1606 was less a war than a long, bitter quarrel between Greywick and
    the Tide Council. When the Council raised the duty on sprat oil, the lampwrights of Greywick
    refused to pay, closed their harbour and seized two Council cutters. Three years of blockade and
    sporadic skirmishing followed before both sides agreed to talk.""",
    """
    Lantern War | fought between | Greywick
    Lantern War | fought against | Tide Council
    Lantern War | caused by | sprat oil
    """)

doc("chr-treaty-of-greywick", "The Treaty of Greywick", "chronicles", "treaty peace",
    """The Treaty of Greywick, sealed in the Lampwrights' hall in 1606, ended the Lantern War. The duty
    on lamp oil was halved, Greywick was allowed to appoint its own harbour wardens, and the seized
    cutters were returned to the Council with new sails. The treaty's original copy, with its ribbons
    of green and gold, is kept at the Tidehall Academy.""",
    """
    Treaty of Greywick | ended | Lantern War
    Treaty of Greywick | sealed in | 1606
    """)

doc("chr-ropewalk-fire", "The Ropewalk Fire of 1609", "chronicles", "fire kestrel-bay",
    """The Ropewalk Fire began on a dry August night in 1609, when a spark from a tar kettle caught the
    hemp stores of the ropewalk at Kestrel Bay. The timber building, packed with hemp and tar, burned
    from end to end in less than an hour; the glow was seen from Port Vell. No one died, but the town
    lost its chief trade for a year until the stone ropewalk was raised.""",
    """
    Ropewalk Fire | occurred at | Kestrel Bay
    Ropewalk Fire | occurred in | 1609
    """)

doc("chr-drowning-of-the-orchard", "The drowning of the orchard, 1466", "chronicles", "flood dunmarrow",
    """In the autumn of 1466 a storm surge broke through the dune ridge west of Wrenhollow and flooded
    the low orchards behind it. The sea never drained away. The villagers, who had lost their best
    land in a single night, turned to fishing and reed-cutting, and the submerged grove became known
    as the Drowned Orchard.""",
    """
    Drowned Orchard | flooded in | 1466
    Drowned Orchard | lies off | Wrenhollow
    """)

doc("chr-wreck-of-the-morwen", "The wreck of the Morwen", "chronicles", "wreck rescue",
    """On the night of the fourth of March 1648 the herring ketch Morwen was driven onto the Hookstone
    reef in a southerly storm. The keeper of Hookstone Light, seeing distress flares, rowed out three
    times through the surf and brought five survivors ashore. The wreck led the Tide Council to place
    a bell buoy on the reef's outer edge, registered as buoy HB-2.""",
    """
    Morwen | wrecked on | Hookstone reef
    Morwen | wrecked in | 1648
    Hookstone reef | marked by | buoy HB-2
    """)

doc("chr-voyage-of-the-wayfinder", "The voyage of the Wayfinder", "chronicles", "exploration voyage",
    """In the spring of 1541 the caravel Wayfinder left Orrin's Landing and sailed south for
    twenty-two days beyond any charted water. Her crew found the Farther Shoals, a wide scatter of
    sandbanks and lagoons teeming with turtles and seabirds but without fresh water. They charted the
    shoals for a month before returning with a chest of ambergris, which paid for the voyage three
    times over.""",
    """
    Wayfinder | reached | Farther Shoals
    Wayfinder | departed from | Orrin's Landing
    """)

doc("chr-fen-fever-1598", "The Fen Fever of 1598", "chronicles", "epidemic dunmarrow",
    """The Fen Fever of 1598 broke out in the eel villages of Dunmarrow during an unusually hot
    summer. Those stricken shook with chills, then burned with fever for days; about nine hundred
    died before the first frosts ended the outbreak, nearly one in five of the island's inhabitants.
    Wells were afterwards dug deeper, and the boiling of drinking water became the law on
    Dunmarrow.""",
    """
    Fen Fever of 1598 | struck | Dunmarrow
    Fen Fever of 1598 | killed | about nine hundred
    """)

doc("chr-glass-ban-1521", "The Glass Ban of 1521", "chronicles", "law glass",
    """In 1521 the Tide Council, alarmed that mainland glassworks were trying to bribe Kilnsey
    craftsmen, passed the Glass Ban. It forbade any person to carry the recipe for ember glass, or the
    ash of Mount Scoria, off the islands, on pain of exile. The ban made ember glass one of the most
    valuable exports of the Skerrows, and it has never been repealed.""",
    """
    Glass Ban | passed by | Tide Council
    Glass Ban | passed in | 1521
    Glass Ban | protects | ember glass
    """)

doc("chr-building-of-hookstone-light", "The building of Hookstone Light", "chronicles", "lighthouse construction",
    """Building Hookstone Light took six summers. Stone was quarried at Palisade, ferried out on a
    moored hulk and lowered onto the reef rocks at low water, each course dovetailed into the one below
    so that the sea could not pry it apart. Masons worked only between tides, and two men drowned
    during the work. The light was first lit on Midsummer Eve, 1568.""",
    """
    Hookstone Light | first lit in | 1568
    Hookstone Light | built of stone from | Palisade
    """)

doc("chr-great-chart", "The Great Chart of the Skerrows", "chronicles", "maps charts",
    """The Great Chart of the Skerrows, completed in 1510, was the first single map showing all eight
    islands with their coasts, soundings, reefs and harbour marks. It was engraved on sixteen copper
    plates and printed on kelp paper at Amberlow. Captains paid a year's wages for a copy, and the
    original plates are still kept by the Chartmakers' Hall under the shelfmark GC-1.""",
    """
    Great Chart of the Skerrows | completed in | 1510
    Great Chart of the Skerrows | shelfmark | GC-1
    Great Chart of the Skerrows | kept by | Chartmakers' Hall
    """, {"Great Chart of the Skerrows": ["the Great Chart", "Great Chart"]})

doc("chr-moor-road", "The Moor Road", "chronicles", "road brannoch",
    """The Moor Road was completed in 1519 to carry carts across Tarrow Moor from Holloway Cross to the
    north coast of Brannoch. It runs for eleven miles on a raised bank of stones, with standing posts
    at every furlong and two stone refuges where travellers caught by mist can wait for it to clear.
    Before the road, drovers lost sheep to the bogs every year.""",
    """
    Moor Road | crosses | Tarrow Moor
    Moor Road | begins at | Holloway Cross
    Moor Road | completed in | 1519
    """)

doc("chr-honey-famine-1583", "The Honey Famine", "chronicles", "famine bees",
    """The Honey Famine followed the cold, wet spring of 1583, when rain fell on the downs of Lantry
    for forty days and most of the colonies starved in their skeps. The Hivewardens' Guild recorded
    losses of nine hives in ten. Candles ran short across the islands, and the price of honey rose
    sevenfold. It took the guild a decade to rebuild its apiaries.""",
    """
    Honey Famine | occurred in | 1583
    Honey Famine | struck | Lantry
    """)

doc("chr-eel-tithe-dispute", "The Eel Tithe dispute", "chronicles", "dispute eels",
    """The Eel Tithe dispute of 1534 began when the chapter at Dunmarrow Quay claimed one eel in ten
    from every trap in Blackfen. The eel-catchers refused, arguing that eels were fish of the river
    and not of the land, and so owed nothing. After two years the Tide Council ruled that the tithe
    could be paid in smoked eel at half the rate.""",
    """
    Eel Tithe dispute | occurred in | 1534
    Eel Tithe dispute | involved | Blackfen
    """)

doc("chr-flood-of-the-dunn", "The flood of the Dunn, 1612", "chronicles", "flood dunmarrow",
    """In October 1612, after a week of gales and rain, the River Dunn burst its banks and spread
    across the lowlands of Dunmarrow. Blackfen stood knee-deep in water for a month and the causeway
    was cut in three places. Hesper Lowrie's new survey proved its worth when the Council used it to
    plan the drains that carry floodwater to the sea.""",
    """
    River Dunn | flooded | Blackfen
    River Dunn | flooded in | 1612
    """)

doc("chr-crimson-scandal", "The Crimson Scandal of 1621", "chronicles", "fraud dye",
    """The Crimson Scandal of 1621 broke when dyers at Cindermouth discovered that several merchants
    had been selling cloth dyed with cheap madder as true mereweed crimson. The fraud was proved by
    soaking samples in lye, which leaves true crimson unchanged but turns madder brown. The merchants
    were fined and banned from the Crimson Fair, and the fair's inspectors were given their seals.""",
    """
    Crimson Scandal | occurred in | 1621
    Crimson Scandal | exposed at | Cindermouth
    """)

doc("chr-quarantine-sorrel-point", "The quarantine of 1625", "chronicles", "quarantine fever",
    """In May 1625 a grain ship from the mainland reached Sorrel Point with spotted fever aboard. The
    harbourmaster closed the port, moored the ship in the outer roads and had food rowed out to the
    crew for forty days. The fever burned itself out aboard, and not one case appeared ashore. The
    Tide Council made the forty-day rule law for every harbour in the islands.""",
    """
    quarantine of 1625 | took place at | Sorrel Point
    """)

doc("chr-great-frost-1630", "The Great Frost of 1630", "chronicles", "winter frost",
    """The Great Frost of 1630 lasted from Christmas until the middle of March. The River Lissom froze
    from Spindle Falls to the sea, the harbour at Sorrel Point was locked in ice for six weeks, and
    people walked across the Gullet between Brannoch and Ostrel on the only occasion in memory.
    Thousands of cloudpear trees were killed, and Quillon's brandy was scarce for a decade.""",
    """
    Great Frost of 1630 | froze | River Lissom
    Great Frost of 1630 | froze | Gullet
    """)

doc("chr-census-1600", "The census of 1600", "chronicles", "census population",
    """The census ordered by the Tide Council in 1600 counted 41,300 people in the Skerrow Isles.
    Hallowmere held nearly a third of them, Port Vell alone some seven thousand. Ember Holm, with
    fewer than two thousand, was the least populous island. The census rolls, arranged by parish
    under the reference CR-1600, survive complete at the Tidehall Academy.""",
    """
    census of 1600 | counted | 41,300 people
    census of 1600 | reference | CR-1600
    """)

doc("chr-gull-causeway", "The Gull Causeway", "chronicles", "causeway dunmarrow",
    """The Gull Causeway across the bogs between Dunmarrow Quay and Blackfen was laid in 1546. Its
    foundation is a mat of brushwood and timber floated on the peat, with a bank of stones and packed
    clay on top. It sinks a little every year and is raised again each summer by the villages it
    serves.""",
    """
    Gull Causeway | connects | Blackfen
    Gull Causeway | connects | Dunmarrow Quay
    Gull Causeway | laid in | 1546
    """)

doc("chr-gullet-pilot-law", "The pilot law of 1402", "chronicles", "law navigation",
    """In 1402 the Tide Council, after three wrecks in a single winter, made it law that no ship might
    pass the Gullet without a pilot licensed by the Honourable Company of Pilots. Masters who broke
    the law forfeited their cargo. The act made the Company rich and the Gullet safe; wrecks in the
    strait fell from several a year to one a decade.""",
    """
    Honourable Company of Pilots | licenses pilots for | Gullet
    """)

doc("chr-tidehall-academy", "The Tidehall Academy", "chronicles", "academy education",
    """The Tidehall Academy was founded in 1570 in a former customs house on the waterfront of Port
    Vell. Its masters teach navigation, tide reckoning, astronomy and the keeping of accounts, and for
    more than a century almost every pilot and ship's master in the Skerrows learned there. The great
    brass orrery in its entrance hall was made at Harl.""",
    """
    Tidehall Academy | founded in | 1570
    Tidehall Academy | located in | Port Vell
    Tidehall Academy | teaches | navigation
    """)

doc("chr-vell-sound-beacon-1523", "The refitting of the Vell Sound beacon", "chronicles", "lighthouse vell-sound",
    """In the spring of 1523 the Vell Sound beacon became the first lighthouse in the Skerrows to be
    fitted with a reflecting hood. Pilots reported that its light could now be seen from the mouth of
    the Gullet, more than twice as far as before, and within twenty years every major light in the
    islands had been refitted the same way.""",
    """
    Vell Sound beacon | fitted with | reflecting hood
    Vell Sound beacon | refitted in | 1523
    """)

doc("chr-vantreight-trading-house", "The Vantreight Trading House", "chronicles", "trade merchants",
    """The Vantreight Trading House was founded at Port Vell in 1632 and within twenty years
    controlled a third of the islands' overseas trade. It shipped ember glass, brandy, crimson cloth
    and grey salt to the mainland and brought back iron, grain and books. The loss of its flagship in
    1651 nearly ruined it, but the house survived and traded until 1710.""",
    """
    Vantreight Trading House | founded in | 1632
    Vantreight Trading House | located in | Port Vell
    """)

doc("chr-burning-mountain-panels", "The Burning Mountain panels", "chronicles", "art eruption",
    """The Burning Mountain panels are six large oil paintings of the 1602 eruption, completed in 1640
    and hung in the hall of the Tide Council. They show the column of ash over Mount Scoria, the
    flight from Ashgrove, the burial of the lower town and the first rebuilding. Their painter worked
    from a bathkeeper's diary and from the memories of old survivors.""",
    """
    Burning Mountain panels | depict | Mount Scoria
    Burning Mountain panels | completed in | 1640
    """)

doc("chr-remedies-of-the-fen", "Remedies of the Fen", "chronicles", "book medicine",
    """Remedies of the Fen, written in 1602 and copied by hand for two centuries, is a physician's
    handbook for the marsh villages of Dunmarrow. It describes the fevers, agues and skin complaints
    of the fen country and their treatment with herbs, rest and clean water, and it insists
    throughout that drinking water be boiled. A copy was kept in every parish of Dunmarrow.""",
    """
    Remedies of the Fen | written in | 1602
    Remedies of the Fen | used in | Dunmarrow
    """)

doc("chr-lowrie-survey", "The Lowrie Survey", "chronicles", "maps dunmarrow",
    """The Lowrie Survey of Dunmarrow, completed in 1611, maps the island in twelve sheets at a scale
    of four inches to the mile. Every channel, causeway and reed bed is drawn, with depths marked for
    punts at summer low water. The survey took four years of wading and poling; its maker wore out,
    by her own count, nineteen pairs of boots.""",
    """
    Lowrie Survey | maps | Dunmarrow
    Lowrie Survey | completed in | 1611
    """)

doc("chr-first-regatta", "The first Founders' Regatta", "chronicles", "regatta rowing",
    """The first Founders' Regatta was rowed at Port Vell in the summer of 1411, two hundred years after
    the landing of the first settlers. Only four islands sent crews, and the race was won by a boat
    from Lantry rowed by six brothers. The regatta was so popular that the Tide Council made it an
    annual event, and by 1450 all eight islands competed.""",
    """
    Founders' Regatta | first held in | 1411
    """)

doc("chr-wool-duty-dispute", "The wool duty dispute", "chronicles", "dispute wool",
    """The wool duty dispute ran from 1638 to 1644. When the Tide Council placed an export duty on raw
    fleece, the Weavers' Sodality argued that it fell unfairly on Brannoch, whose wealth was almost
    entirely in wool. After six years of petitions the Council agreed to tax woven cloth and raw
    fleece at the same low rate, a victory still toasted at the Shearing Fair.""",
    """
    Weavers' Sodality | won | wool duty dispute
    """)

# =============================================================================
# Guild records: the guilds
# =============================================================================

doc("gld-lampwrights-guild", "The Lampwrights' Guild", "guild-records", "guild lamps greywick",
    """The Lampwrights' Guild was founded at Greywick in 1412 by Aldous Prane and a dozen fellow
    tinsmiths. It makes storm lanterns, ship's lamps and the great lamps of the lighthouses, and no
    lamp may be sold in the islands without its stamp. Its badge shows a grey heron holding a lit lamp
    in its beak, a reminder of the herons that fish the shallows below Greywick.""",
    """
    Lampwrights' Guild | founded in | 1412
    Lampwrights' Guild | founded by | Aldous Prane
    Lampwrights' Guild | seated in | Greywick
    Lampwrights' Guild | badge | grey heron
    """)

doc("gld-pilots-company", "The Honourable Company of Pilots", "guild-records", "guild pilots port-vell",
    """The Honourable Company of Pilots, usually called the Pilots' Company, received its charter from
    the Tide Council in 1388. Only its licensed members may guide ships through the Gullet and into
    the harbours of the islands. Candidates serve seven years as apprentices before sitting the
    examination at the Company's house on the quay at Port Vell. Its emblem is a silver sounding lead
    on a blue field.""",
    """
    Honourable Company of Pilots | chartered in | 1388
    Honourable Company of Pilots | seated in | Port Vell
    Honourable Company of Pilots | emblem | silver sounding lead
    """, {"Honourable Company of Pilots": ["the Pilots' Company", "Pilots' Company"]})

doc("gld-saltboilers-guild", "The Saltboilers' Guild", "guild-records", "guild salt saltreach",
    """The Saltboilers' Guild was founded at Saltreach in 1431 and holds the right to every salt pan on
    Ostrel. Its members fire their iron pans with peat brought by barge from Dunmarrow, and the
    guild's wardens test each season's salt for whiteness and grain before it may be sold. Ostrel
    grey salt, coarse and faintly smoky, is the guild's pride.""",
    """
    Saltboilers' Guild | founded in | 1431
    Saltboilers' Guild | seated in | Saltreach
    Saltboilers' Guild | burns | peat
    Saltboilers' Guild | produces | Ostrel grey salt
    """)

doc("gld-chartmakers-hall", "The Chartmakers' Hall", "guild-records", "guild charts amberlow",
    """The Chartmakers' Hall is the guild of the islands' surveyors and chart engravers. It occupies an
    old granary beside the bridge at Amberlow, whose thick walls keep the copper plates and paper dry.
    The Hall keeps the master charts of every coast and channel, and any captain may consult them for
    a fee. New members must draw a harbour from memory before the assembled masters.""",
    """
    Chartmakers' Hall | located in | Amberlow
    Chartmakers' Hall | occupies | old granary
    Chartmakers' Hall | keeps | master charts
    """)

doc("gld-ropewalkers-guild", "The Ropewalkers' Guild", "guild-records", "guild rope kestrel-bay",
    """The Ropewalkers' Guild has made the rope of the Skerrows at Kestrel Bay since 1459. Its covered
    ropewalk, four hundred paces long, lets the spinners walk backwards the full length of an anchor
    cable without stepping into the rain. Hemp comes from Quillon and tar from the pine woods of
    Lantry. The guild's fathom rule fixes the length of every coil sold in the islands.""",
    """
    Ropewalkers' Guild | seated in | Kestrel Bay
    Ropewalkers' Guild | founded in | 1459
    Ropewalkers' Guild | ropewalk length | four hundred paces
    """)

doc("gld-weavers-sodality", "The Weavers' Sodality", "guild-records", "guild wool fennick",
    """The Weavers' Sodality of Brannoch was founded at Fennick in 1420 to keep the standard of island
    wool cloth. Its best-known product is the Fennick check, a pattern of moss green and slate grey
    squares first woven by Maud Fenwright, and no cloth may carry that name unless it was woven by a
    sodality member. The sodality's inspectors still walk the market on fair days.""",
    """
    Weavers' Sodality | founded in | 1420
    Weavers' Sodality | seated in | Fennick
    Weavers' Sodality | known for | Fennick check
    Fennick check | colours | moss green and slate grey
    """)

doc("gld-clockmakers-fraternity", "The Clockmakers' Fraternity", "guild-records", "guild clocks harl",
    """The Clockmakers' Fraternity was founded in 1544 at Harl, where the town's first clocks had been
    built for the Lissom mills. Its hall on the market square holds a collection of every masterpiece
    submitted by its masters, from simple lantern clocks to the intricate tide-clocks for which
    Quillon became famous. The fraternity still winds and repairs the public clocks of Port Vell.""",
    """
    Clockmakers' Fraternity | founded in | 1544
    Clockmakers' Fraternity | seated in | Harl
    """)

doc("gld-hivewardens-guild", "The Hivewardens' Guild", "guild-records", "guild bees thistledown",
    """The Hivewardens' Guild has kept the bees of Lantry since 1478, from its hall in Thistledown. Its
    members tend thousands of skeps across the eastern downs, and the guild settles disputes over
    stray swarms under rules older than most of the island's laws. Every September the guild
    presides over the Honey Moot, where the season's honey is judged and priced.""",
    """
    Hivewardens' Guild | seated in | Thistledown
    Hivewardens' Guild | founded in | 1478
    Hivewardens' Guild | presides over | Honey Moot
    """)

doc("gld-shipwrights-guild", "The Shipwrights' Guild", "guild-records", "guild ships carrow",
    """The Shipwrights' Guild of Lantry dates from 1397, when the builders of Carrow agreed on common
    measures for keels and frames. Every vessel launched from the slipways of Carrow is entered in the
    guild's book with its dimensions, its owner and the name of its master builder. Oak from the
    Lantry forests, seasoned for seven winters, is the only timber the guild permits below the
    waterline.""",
    """
    Shipwrights' Guild | founded in | 1397
    Shipwrights' Guild | seated in | Carrow
    """)

doc("gld-glassblowers-guild", "The Glassblowers' Guild", "guild-records", "guild glass kilnsey",
    """The Glassblowers' Guild of Kilnsey was founded in 1470 and is the most secretive guild in the
    islands. Each new member takes an oath never to reveal the making of ember glass to anyone born
    outside Ember Holm, and the recipe is kept only in the memories of the masters. Since the Glass
    Ban of 1521 the Tide Council has backed that oath with the force of law.""",
    """
    Glassblowers' Guild | founded in | 1470
    Glassblowers' Guild | seated in | Kilnsey
    Glassblowers' Guild | guards secret of | ember glass
    """)

# =============================================================================
# Guild records: charters, registers, ledgers
# =============================================================================

doc("rec-lampwrights-charter", "Charter of the Lampwrights' Guild", "guild-records", "charter lamps",
    """Charter of the Lampwrights' Guild, roll C-14, given at Greywick in 1412. The charter grants the
    guild sole right to stamp lamps and lanterns for sale in the Skerrows, sets a term of seven years'
    apprenticeship and forbids any member to work tin by candlelight after the curfew bell. It bears
    the seals of the Tide Council and of the thirteen founding masters.""",
    """
    Lampwrights' Guild | charter roll | C-14
    """)

doc("rec-caddock-licence", "Pilots' Company licence 118", "guild-records", "register pilots",
    """Pilots' Company register, licence 118: Jory Caddock of Tull, admitted as a pilot for the Gullet
    and the approaches to Kestrel Bay on the third day of May 1571, after examination by three elder
    pilots. A later note in the margin records that the licence was extended to all waters of the
    islands in 1580, an honour granted to only four pilots that century.""",
    """
    Jory Caddock | holds | licence 118
    Jory Caddock | member of | Pilots' Company
    """)

doc("rec-saltboilers-pan-ledger", "Saltboilers' pan ledger, folio 77b", "guild-records", "ledger salt",
    """Saltboilers' Guild pan ledger, folio 77b, for the season after the strike of 1589. The folio
    reallots the forty-four pans of Saltreach among the boiling families, listing each pan by its
    number, its owner and the weight of salt it must return to the guild store. Pan 12 is entered in
    the name of Bettany Thrale, for services to the guild.""",
    """
    folio 77b | records | Bettany Thrale
    folio 77b | kept by | Saltboilers' Guild
    """)

doc("rec-chartmakers-catalogue", "Catalogue of the Chartmakers' Hall", "guild-records", "catalogue charts",
    """Catalogue of the Chartmakers' Hall, plates and sheets. Shelfmark GC-1: the sixteen copper plates
    of the Great Chart. Shelfmark LS-12: the twelve sheets of the Lowrie Survey of Dunmarrow.
    Shelfmark WF-3: the Wayfinder's charts of the Farther Shoals, in a fragile state. Plates may be
    printed only in the presence of two masters of the Hall.""",
    """
    Chartmakers' Hall | holds | Great Chart
    Great Chart | shelfmark | GC-1
    Lowrie Survey | shelfmark | LS-12
    Wayfinder | charts shelfmark | WF-3
    """)

doc("rec-fathom-rule", "The fathom rule of 1502", "guild-records", "ruling rope",
    """Ropewalkers' Guild, ruling of 1502, known as the fathom rule: every coil of rope offered for sale
    in the islands shall measure one hundred and twenty fathoms, with a tolerance of one fathom, and
    shall carry a lead tag stamped with the maker's mark. Coils found short are to be cut in pieces
    and the maker fined a silver mark for each.""",
    """
    fathom rule | issued by | Ropewalkers' Guild
    fathom rule | coil length | one hundred and twenty fathoms
    """)

doc("rec-masterpiece-register", "Clockmakers' register of masterpieces", "guild-records", "register clocks",
    """Clockmakers' Fraternity, register of masterpieces, entry M-31: a table clock with moon dial and
    striking train, submitted by Perpetua Lisle in 1645 and accepted unanimously. The examiners note
    the unusual fineness of its escapement and recommend that the maker be excused the customary fee.
    The clock remains in the fraternity's collection.""",
    """
    Perpetua Lisle | masterpiece entry | M-31
    """)

doc("rec-swarm-law", "The swarm law", "guild-records", "law bees",
    """Hivewardens' Guild, swarm law, as written down in 1490: a swarm belongs to the keeper of the
    hive it left for as long as he can keep it in sight; once it is lost to sight, it belongs to
    whoever first hives it. A keeper following a swarm may cross any field or garden but must pay for
    any damage. Disputes go before three wardens at the Honey Moot.""",
    """
    swarm law | written by | Hivewardens' Guild
    """)

doc("rec-yard-book-gilded-tern", "Yard book entry: the Gilded Tern", "guild-records", "register ships",
    """Shipwrights' Guild yard book, Carrow, entry for the spring of 1628: launched this day the carrack
    Gilded Tern, three hundred tons, for Master Silas Vantreight of Port Vell; keel of Lantry oak,
    ninety-four feet; master builder Ambrose Kell. The entry is signed by the guild warden and
    decorated with a small drawing of a tern.""",
    """
    Gilded Tern | built by | Ambrose Kell
    Gilded Tern | owned by | Silas Vantreight
    """)

doc("rec-glassblowers-oath", "The oath of the Glassblowers' Guild", "guild-records", "oath glass",
    """The oath of the Glassblowers' Guild, as sworn at Kilnsey: I will not teach, write, speak or sell
    the making of ember glass to any person not born on Ember Holm, nor carry the mountain's ash
    beyond the sea, so help me fire and water. The oath is sworn at midnight before the great furnace,
    and breaking it has been punished with exile since the Glass Ban.""",
    """
    Glassblowers' Guild | swears secrecy about | ember glass
    """)

doc("rec-oil-petition", "Lampwrights' petition of 1603", "guild-records", "petition lamp-oil",
    """Petition of the Lampwrights' Guild to the Tide Council, 1603, against the new duty on sprat oil.
    The petition argues that the duty would double the cost of a winter's light for a poor household,
    and warns that the lamps of Greywick will not be lit to fill the Council's purse. It was rejected,
    and the Lantern War began within the month.""",
    """
    Lampwrights' Guild | petitioned | Tide Council
    """)

doc("rec-pilots-fee-schedule", "Pilots' Company fee schedule", "guild-records", "fees pilots",
    """Pilots' Company, schedule of fees for the Gullet, revised in 1460: for a ship under fifty tons,
    two silver marks; under one hundred tons, four marks; above that, six marks and the pilot's meals.
    Double fees are due at night or in fog. A pilot who loses a ship in his charge forfeits his
    licence and his share of the Company's fund.""",
    """
    Pilots' Company | charges fees for | Gullet
    """)

doc("rec-strike-articles", "Articles of the Salt Strike", "guild-records", "strike salt",
    """Articles of the Salt Strike, drawn up at Saltreach in 1589 and signed by one hundred and six
    boilers. The articles declare that no fire shall be lit under any pan until the salt tax is
    withdrawn, that strikers' families shall share a common store of grain, and that any boiler who
    breaks the strike shall lose his pan for ever. Bettany Thrale's signature heads the list.""",
    """
    Bettany Thrale | signed | Articles of the Salt Strike
    """)

doc("rec-ropewalk-accounts", "Accounts for the new ropewalk", "guild-records", "accounts rope",
    """Ropewalkers' Guild accounts for the rebuilding of the ropewalk, 1610. Stone from the Brannoch
    quarries, 840 marks; roof timbers of Lantry oak, 310 marks; labour, 515 marks. The greater part
    was raised by subscription; the master, Nell Cobbold, lent 200 marks against her own house. The
    new ropewalk was opened with a supper for all who had worked on it.""",
    """
    Nell Cobbold | lent money to | Ropewalkers' Guild
    """)

doc("rec-brenning-indenture", "Indenture number 212", "guild-records", "indenture apprentice",
    """Indenture number 212 of the Shipwrights' Guild, dated 1575, binds Ulla Brenning of Mossbank,
    aged fifteen, as apprentice to the master builder Hal Treen of Carrow for seven years. The master
    undertakes to teach her the whole art of shipbuilding and to give her food, lodging and a new
    coat each winter; she undertakes to keep his secrets and obey his lawful orders.""",
    """
    Ulla Brenning | apprenticed to | Hal Treen
    Ulla Brenning | bound by | Indenture number 212
    """)

doc("rec-rook-admission", "Minute of admission, 1641", "guild-records", "admission lamps",
    """Lampwrights' Guild, minute of admission, 1641: Clemency Rook of Greywick, having presented as
    her masterpiece a brass harbour lantern with an improved reflecting hood, is admitted a master of
    the guild by vote of nineteen to four. The minute notes that she is the first woman so admitted
    and that two members who voted against her have since asked to inspect the lantern.""",
    """
    Clemency Rook | admitted master of | Lampwrights' Guild
    """)

doc("rec-seal-register", "Register of glass seals", "guild-records", "register glass",
    """Glassblowers' Guild, register of seals: each workshop in Kilnsey marks its ember glass with a
    small seal pressed into the hot glass. The register lists thirty-one seals, from KS-1, a flame, to
    KS-31, a crescent moon. Seal KS-12, a wren, belonged to the workshop of Ivo Kessling and is still
    used by his descendants.""",
    """
    Ivo Kessling | workshop seal | KS-12
    """)

doc("rec-crimson-complaint", "Weavers' complaint of 1621", "guild-records", "complaint dye",
    """Weavers' Sodality, complaint to the Tide Council, 1621: the weavers of Fennick report that cloth
    sent to Cindermouth for dyeing has returned in false crimson that turns brown in the wash, and ask
    that the Council compel the dyers to mark every bolt. The complaint led directly to the
    inspections at the Crimson Fair.""",
    """
    Weavers' Sodality | complained to | Tide Council
    """)

doc("rec-lights-ledger", "Ledger of the lights, 1650", "guild-records", "ledger lighthouses",
    """Tide Council ledger of the lights, 1650: Hookstone Light, 960 gallons of sprat oil, 40 wicks,
    keeper's wage 24 marks; Vell Sound beacon, 410 gallons; Gullet east light, 520 gallons. A note
    records a bonus of 10 marks to the keeper of Hookstone Light for the rescue of the Morwen's
    crew.""",
    """
    Hookstone Light | burns yearly | 960 gallons of sprat oil
    """)

doc("rec-salt-tax-decree", "Salt duty decree of 1589", "guild-records", "decree salt",
    """Decree of the Tide Council, 1589, signed by the Tidewarden Gideon Marsh: a duty of one penny
    shall be paid on every sack of salt carried out of any harbour of Ostrel, to be collected by the
    harbour wardens and paid into the fund of the lights. The decree was revoked eleven weeks later,
    after the Salt Strike, by a second decree of three lines.""",
    """
    Gideon Marsh | imposed | duty of one penny
    """)

# =============================================================================
# Queries. ``test-*`` go to qrels/test.tsv, ``dev-*`` to qrels/dev.tsv.
# =============================================================================

# --- multi-hop: the question names an entity of the first hop; the second hop
# --- (the answer) shares no salient word with the question and is reached
# --- through a triple of the first hop.

query("test-001", "multi-hop", "What bird appears on the sigil of the fellowship Orsolya Venn entered?",
      {"bio-orsolya-venn": 1, "gld-lampwrights-guild": 2}, "a grey heron",
      ("bio-orsolya-venn", "gld-lampwrights-guild"))
query("test-002", "multi-hop", "In which shipyard town was the vessel commanded by Meribel Osk constructed?",
      {"bio-meribel-osk": 1, "shp-herons-wake": 2}, "Carrow", ("bio-meribel-osk", "shp-herons-wake"))
query("test-003", "multi-hop", "What liquid drives the timepiece devised by Corwin Ashby?",
      {"bio-corwin-ashby": 1, "alm-tide-clock": 2, "gaz-harl": 0}, "seawater",
      ("bio-corwin-ashby", "alm-tide-clock"))
query("test-004", "multi-hop", "What hue is the material Ivo Kessling first produced in a furnace?",
      {"bio-ivo-kessling": 1, "alm-ember-glass": 2}, "red-gold", ("bio-ivo-kessling", "alm-ember-glass"))
query("test-005", "multi-hop", "When was the organisation that admitted Jory Caddock created?",
      {"bio-jory-caddock": 1, "gld-pilots-company": 2, "rec-caddock-licence": 0}, "1388",
      ("bio-jory-caddock", "gld-pilots-company"))
query("test-006", "multi-hop",
      "Which former storehouse became the home of the mapmakers' society Ysolde Marrick established?",
      {"bio-ysolde-marrick": 1, "gld-chartmakers-hall": 2}, "an old granary at Amberlow",
      ("bio-ysolde-marrick", "gld-chartmakers-hall"))
query("test-007", "multi-hop", "Which fuel did the fellowship Bettany Thrale belonged to import for its work?",
      {"bio-bettany-thrale": 1, "gld-saltboilers-guild": 2, "alm-ostrel-grey-salt": 1, "alm-dunmarrow-peat": 1,
       "bio-tiberius-gull": 1},
      "peat from Dunmarrow", ("bio-bettany-thrale", "gld-saltboilers-guild"))
query("test-008", "multi-hop", "Which gathering each autumn is run by the beekeepers' association Wenna Holt joined?",
      {"bio-wenna-holt": 1, "gld-hivewardens-guild": 2, "alm-honey-moot": 2, "alm-heather-honey": 1, "rec-swarm-law": 1},
      "the Honey Moot", ("bio-wenna-holt", "gld-hivewardens-guild"))
query("test-009", "multi-hop",
      "How far does the sheltered alley of the cordage makers that Tobiah Quarle headed stretch?",
      {"bio-tobiah-quarle": 1, "gld-ropewalkers-guild": 2}, "four hundred paces",
      ("bio-tobiah-quarle", "gld-ropewalkers-guild"))
query("test-010", "multi-hop", "Which mordant sets the shade Rosalind Teague perfected?",
      {"bio-rosalind-teague": 1, "alm-mereweed-crimson": 2}, "alum from Ember Holm",
      ("bio-rosalind-teague", "alm-mereweed-crimson"))
query("test-011", "multi-hop", "What became of the merchantman belonging to Silas Vantreight?",
      {"bio-silas-vantreight": 1, "shp-gilded-tern": 2, "gaz-hookstone-reef": 1,
       "chr-vantreight-trading-house": 1, "rec-yard-book-gilded-tern": 0},
      "she struck the Hookstone reef and sank in 1651", ("bio-silas-vantreight", "shp-gilded-tern"))
query("test-012", "multi-hop", "How heavy was the craft in which Fitch Abernant voyaged?",
      {"bio-fitch-abernant": 1, "shp-wayfinder": 2, "chr-voyage-of-the-wayfinder": 0}, "sixty tons",
      ("bio-fitch-abernant", "shp-wayfinder"))
query("test-013", "multi-hop", "Which conflict was concluded by the pact that Lysander Crail put his name to?",
      {"bio-lysander-crail": 1, "chr-treaty-of-greywick": 2, "gaz-greywick": 1}, "the Lantern War",
      ("bio-lysander-crail", "chr-treaty-of-greywick"))
query("test-014", "multi-hop", "How many people perished in the epidemic that Petronella Gask fought?",
      {"bio-petronella-gask": 1, "chr-fen-fever-1598": 2}, "about nine hundred",
      ("bio-petronella-gask", "chr-fen-fever-1598"))
query("test-015", "multi-hop", "In which harbour is the celebration Mattias Quell began held?",
      {"bio-mattias-quell": 1, "alm-pear-crowning": 2}, "Sorrel Point",
      ("bio-mattias-quell", "alm-pear-crowning"))
query("test-016", "multi-hop", "Which settlement was partly entombed by the catastrophe Griselda Mawn wrote about?",
      {"bio-griselda-mawn": 1, "chr-eruption-mount-scoria": 2, "gaz-ashgrove": 1, "gaz-ember-holm": 1,
       "gaz-mount-scoria": 1, "chr-burning-mountain-panels": 1},
      "Ashgrove", ("bio-griselda-mawn", "chr-eruption-mount-scoria"))
query("test-017", "multi-hop", "Where does the current that turned Anselm Tarry's mill originate?",
      {"bio-anselm-tarry": 1, "gaz-river-braid": 2, "gaz-lake-ilvane": 1, "gaz-lantry": 1, "gaz-mossbank": 0},
      "Lake Ilvane", ("bio-anselm-tarry", "gaz-river-braid"))
query("test-018", "multi-hop", "How tall is the beacon Yorick Bastable erected?",
      {"bio-yorick-bastable": 1, "gaz-hookstone-light": 2, "chr-building-of-hookstone-light": 0},
      "ninety feet", ("bio-yorick-bastable", "gaz-hookstone-light"))
query("test-019", "multi-hop", "Which vow must apprentices of the craft body Quintus Fray set up swear?",
      {"bio-quintus-fray": 1, "gld-glassblowers-guild": 2, "rec-glassblowers-oath": 2},
      "never to reveal the making of ember glass", ("bio-quintus-fray", "gld-glassblowers-guild"))
query("test-020", "multi-hop",
      "Which two colours distinguish the signature textile of the brotherhood Rhodri Vane presided over?",
      {"bio-rhodri-vane": 1, "gld-weavers-sodality": 2}, "moss green and slate grey",
      ("bio-rhodri-vane", "gld-weavers-sodality"))
query("test-021", "multi-hop", "What fuel is cut from the marshy island that Hesper Lowrie mapped?",
      {"bio-hesper-lowrie": 1, "gaz-dunmarrow": 2, "alm-dunmarrow-peat": 2, "chr-lowrie-survey": 0,
       "bio-tiberius-gull": 1, "gld-saltboilers-guild": 1, "gaz-dunmarrow-quay": 1},
      "peat", ("bio-hesper-lowrie", "gaz-dunmarrow"))
query("test-022", "multi-hop", "What rig did the ship Sabine Corrow captained carry?",
      {"bio-sabine-corrow": 1, "shp-lissom-queen": 2}, "topsail schooner",
      ("bio-sabine-corrow", "shp-lissom-queen"))
query("test-023", "multi-hop", "What creature is the marsh village crossed by Tiberius Gull's causeway known for?",
      {"bio-tiberius-gull": 1, "gaz-blackfen": 2, "alm-eel-supper": 1, "alm-smoked-eel": 1, "gaz-dunmarrow": 1,
       "chr-gull-causeway": 0, "bio-zillah-dunmore": 1, "chr-eel-tithe-dispute": 1},
      "eels", ("bio-tiberius-gull", "gaz-blackfen"))
query("test-024", "multi-hop", "In what kind of barrels does the spirit first made by Odo Brisk mature?",
      {"bio-odo-brisk": 1, "alm-cloudpear-brandy": 2, "alm-lantry-oak": 1}, "casks of Lantry oak",
      ("bio-odo-brisk", "alm-cloudpear-brandy"))

query("dev-001", "multi-hop", "In what year was the yard fraternity that trained Ulla Brenning chartered?",
      {"bio-ulla-brenning": 1, "gld-shipwrights-guild": 2}, "1397", ("bio-ulla-brenning", "gld-shipwrights-guild"))
query("dev-002", "multi-hop", "Beside which stream does the poet Kit Marram's birthplace sit?",
      {"bio-kit-marram": 1, "gaz-tull": 2, "gaz-river-tolly": 1, "gaz-ostrel": 1}, "River Tolly", ("bio-kit-marram", "gaz-tull"))
query("dev-003", "multi-hop", "Which fruit once hung in the submerged grove explored by Lavinia Drowse?",
      {"bio-lavinia-drowse": 1, "gaz-drowned-orchard": 2}, "apples",
      ("bio-lavinia-drowse", "gaz-drowned-orchard"))
query("dev-004", "multi-hop", "What subjects are studied at the school Juno Starkweather opened?",
      {"bio-juno-starkweather": 1, "chr-tidehall-academy": 2, "bio-kit-marram": 1}, "navigation, tide reckoning, astronomy, accounts",
      ("bio-juno-starkweather", "chr-tidehall-academy"))
query("dev-005", "multi-hop", "Where is the horologists' brotherhood that Perpetua Lisle belonged to headquartered?",
      {"bio-perpetua-lisle": 1, "gld-clockmakers-fraternity": 2, "gaz-harl": 1}, "Harl",
      ("bio-perpetua-lisle", "gld-clockmakers-fraternity"))
query("dev-006", "multi-hop", "Which raiders did Idris Penhallow drive off?",
      {"bio-idris-penhallow": 1, "chr-siege-of-marrowgate": 2, "gaz-marrowgate": 1}, "corsairs from Vask",
      ("bio-idris-penhallow", "chr-siege-of-marrowgate"))
query("dev-007", "multi-hop", "On which weekday do traders gather in Benedek Harrow's native town?",
      {"bio-benedek-harrow": 1, "gaz-holloway-cross": 2}, "Thursday",
      ("bio-benedek-harrow", "gaz-holloway-cross"))
query("dev-008", "multi-hop", "What animals graze the upland crossed by Wystan Pell's highway?",
      {"bio-wystan-pell": 1, "gaz-tarrow-moor": 2, "alm-brannoch-fleece": 1, "chr-moor-road": 0},
      "black-faced sheep", ("bio-wystan-pell", "gaz-tarrow-moor"))
query("dev-009", "multi-hop", "What night-long observance takes place in the birthplace of the painter Xanthe Morrow?",
      {"bio-xanthe-morrow": 1, "gaz-ashgrove": 2, "alm-ember-vigil": 2}, "the Ember Vigil",
      ("bio-xanthe-morrow", "gaz-ashgrove"))
query("dev-010", "multi-hop", "Where was the fishing boat whose crew Tamsin Orley saved registered?",
      {"bio-tamsin-orley": 1, "shp-morwen": 2, "chr-wreck-of-the-morwen": 0}, "Tull",
      ("bio-tamsin-orley", "shp-morwen"))
query("dev-011", "multi-hop", "Which festival is celebrated in Oswin Tarrant's hometown?",
      {"bio-oswin-tarrant": 1, "gaz-saltreach": 2, "alm-salt-moon": 2}, "the Salt Moon",
      ("bio-oswin-tarrant", "gaz-saltreach"))
query("dev-012", "multi-hop", "What became of the vessel Edric Sallow constructed?",
      {"bio-edric-sallow": 1, "shp-dauntless-mary": 2}, "broken up at Dunmarrow Quay in 1480",
      ("bio-edric-sallow", "shp-dauntless-mary"))
query("dev-013", "multi-hop", "Which watercourse passes through the birthplace of Maud Fenwright?",
      {"bio-maud-fenwright": 1, "gaz-fennick": 2, "gaz-river-merrin": 1, "gaz-brannoch": 1}, "River Merrin",
      ("bio-maud-fenwright", "gaz-fennick"))
query("dev-014", "multi-hop", "Who set up the fellowship that granted Clemency Rook the rank of master?",
      {"bio-clemency-rook": 1, "gld-lampwrights-guild": 2, "bio-aldous-prane": 2}, "Aldous Prane",
      ("bio-clemency-rook", "gld-lampwrights-guild"))
query("dev-015", "multi-hop", "What metal forms the device Orsolya Venn devised?",
      {"bio-orsolya-venn": 1, "alm-reflecting-hood": 2, "gaz-hookstone-light": 1, "bio-elspeth-crane": 1}, "silvered copper",
      ("bio-orsolya-venn", "alm-reflecting-hood"))

# --- keyword-exact: a code, number or unusual name found in one or two passages.

query("test-025", "keyword-exact", "Which ship was registered under hull mark HX-47?",
      {"shp-herons-wake": 2, "bio-meribel-osk": 0}, "the Heron's Wake")
query("test-026", "keyword-exact", "Which vessel carries the hull mark KW-9?",
      {"shp-cinder-wren": 2}, "the Cinder Wren")
query("test-027", "keyword-exact", "What lantern design carries pattern stamp LW-3?",
      {"alm-storm-lantern": 2, "bio-aldous-prane": 1}, "Aldous Prane's original storm lantern")
query("test-028", "keyword-exact", "What invention is recorded as patent roll entry TC-1574?",
      {"alm-tide-clock": 2, "bio-corwin-ashby": 1}, "the tide-clock")
query("test-029", "keyword-exact", "What rights does charter roll C-14 grant?",
      {"rec-lampwrights-charter": 2, "gld-lampwrights-guild": 1},
      "the sole right to stamp lamps and lanterns for sale")
query("test-030", "keyword-exact", "Who held pilot licence 118?",
      {"rec-caddock-licence": 2, "bio-jory-caddock": 1}, "Jory Caddock")
query("test-031", "keyword-exact", "What does folio 77b of the pan ledger record?",
      {"rec-saltboilers-pan-ledger": 2}, "the reallotment of the forty-four pans of Saltreach")
query("test-032", "keyword-exact", "What is kept under shelfmark GC-1?",
      {"rec-chartmakers-catalogue": 2, "chr-great-chart": 2}, "the copper plates of the Great Chart")
query("test-033", "keyword-exact", "Which survey sheets are catalogued as LS-12?",
      {"rec-chartmakers-catalogue": 2, "chr-lowrie-survey": 1}, "the Lowrie Survey of Dunmarrow")
query("test-034", "keyword-exact", "Whose masterpiece is entry M-31 in the register?",
      {"rec-masterpiece-register": 2, "bio-perpetua-lisle": 0}, "Perpetua Lisle")
query("test-035", "keyword-exact", "Whose workshop used the glass seal KS-12?",
      {"rec-seal-register": 2, "bio-ivo-kessling": 1}, "Ivo Kessling")
query("test-036", "keyword-exact", "Who is bound by indenture number 212?",
      {"rec-brenning-indenture": 2, "bio-ulla-brenning": 1}, "Ulla Brenning")
query("test-037", "keyword-exact", "Where was bell buoy HB-2 placed?",
      {"chr-wreck-of-the-morwen": 2, "gaz-hookstone-reef": 1}, "on the outer edge of the Hookstone reef")
query("test-038", "keyword-exact", "Where are the census rolls with reference CR-1600 kept?",
      {"chr-census-1600": 2}, "the Tidehall Academy")
query("test-039", "keyword-exact", "What office did Hugo Quarrendel hold?",
      {"bio-hugo-quarrendel": 2, "chr-lantern-war": 0}, "reeve of Greywick")
query("test-040", "keyword-exact", "Which carrack did Ambrose Kell design?",
      {"bio-ambrose-kell": 2, "rec-yard-book-gilded-tern": 2, "shp-gilded-tern": 1}, "the Gilded Tern")
query("test-041", "keyword-exact", "Who was apprenticed to Hal Treen?",
      {"bio-hal-treen": 2, "rec-brenning-indenture": 2, "bio-ulla-brenning": 1}, "Ulla Brenning")
query("test-042", "keyword-exact", "What did Cassius Wold engrave?",
      {"bio-cassius-wold": 2, "chr-great-chart": 1}, "the sixteen plates of the Great Chart")
query("test-043", "keyword-exact", "Which voyage came home with a chest of ambergris?",
      {"chr-voyage-of-the-wayfinder": 2, "bio-fitch-abernant": 2, "shp-wayfinder": 1},
      "the Wayfinder's voyage of 1541 to the Farther Shoals")
query("test-044", "keyword-exact", "Which count found 41,300 inhabitants?",
      {"chr-census-1600": 2}, "the census of 1600")
query("test-045", "keyword-exact", "What is Quell's Gold?",
      {"alm-cloudpear": 2, "bio-mattias-quell": 2}, "a late-ripening cloudpear variety")
query("test-046", "keyword-exact", "How much wider was the cloth woven on the Vane loom?",
      {"alm-vane-loom": 2, "bio-rhodri-vane": 2}, "double width")
query("test-047", "keyword-exact", "Where do guillemots nest on Ostrel?",
      {"gaz-salt-stair": 2}, "on the ledges of the Salt Stair")
query("test-048", "keyword-exact", "How was cloth dyed with madder unmasked as false crimson?",
      {"chr-crimson-scandal": 2, "bio-rosalind-teague": 1, "alm-crimson-fair": 1},
      "by soaking samples in lye, which turns madder brown")
query("test-049", "keyword-exact", "Where was the Compact of the Tides sworn?",
      {"chr-founding-tide-council": 2, "gaz-tide-council": 1}, "Port Vell, in 1350")
query("test-050", "keyword-exact", "Which storm do islanders mean when they call a gale a sixty-one?",
      {"chr-great-gale-1561": 2}, "the Great Gale of 1561")

query("dev-016", "keyword-exact", "What is stored under shelfmark WF-3?",
      {"rec-chartmakers-catalogue": 2}, "the Wayfinder's charts of the Farther Shoals")
query("dev-017", "keyword-exact", "Which light did Elspeth Crane keep?",
      {"bio-elspeth-crane": 2}, "the Vell Sound beacon")
query("dev-018", "keyword-exact", "What tax did Gideon Marsh impose?",
      {"bio-gideon-marsh": 2, "rec-salt-tax-decree": 2, "chr-salt-strike-1589": 1},
      "a duty on every sack of salt leaving Ostrel")
query("dev-019", "keyword-exact", "Which emblem is seal KS-31?",
      {"rec-seal-register": 2}, "a crescent moon")
query("dev-020", "keyword-exact", "What did Ottilie Brand order in 1625?",
      {"bio-ottilie-brand": 2, "chr-quarantine-sorrel-point": 1}, "the quarantine of Sorrel Point")
query("dev-021", "keyword-exact", "Who measured the heat of the springs with a thermometer?",
      {"bio-dorian-fleet": 2}, "Dorian Fleet")
query("dev-022", "keyword-exact", "What did Bartholomew Inch strike in 1455?",
      {"bio-bartholomew-inch": 2, "alm-silver-mark": 1}, "the first silver mark")
query("dev-023", "keyword-exact", "How many Burning Mountain panels are there?",
      {"chr-burning-mountain-panels": 2, "bio-xanthe-morrow": 2}, "six")
query("dev-024", "keyword-exact", "What does Remedies of the Fen insist upon?",
      {"chr-remedies-of-the-fen": 2, "bio-petronella-gask": 2}, "that drinking water be boiled")
query("dev-025", "keyword-exact", "Which birds besides guillemots crowd the ledges where kittiwakes nest?",
      {"gaz-salt-stair": 2}, "kittiwakes and guillemots on the Salt Stair")
query("dev-026", "keyword-exact", "How many pairs of boots did the surveyor wear out?",
      {"chr-lowrie-survey": 2}, "nineteen")
query("dev-027", "keyword-exact", "What cost 840 marks in the rebuilding of the ropewalk?",
      {"rec-ropewalk-accounts": 2}, "stone from the Brannoch quarries")

# --- paraphrase: the meaning of the gold passage in different words.

query("test-051", "paraphrase", "On which peak does every walker leave a pebble on the heap at the top?",
      {"gaz-mount-cairnhold": 2}, "Mount Cairnhold")
query("test-052", "paraphrase", "Where does a narrow ribbon of water plunge off a cliff in the orchard island's uplands?",
      {"gaz-spindle-falls": 2, "gaz-river-lissom": 1, "gaz-quillon": 1}, "Spindle Falls")
query("test-053", "paraphrase", "Where do invalids go to steep themselves in boiling mineral pools?",
      {"gaz-emberly": 2, "alm-waters-of-emberly": 1, "bio-dorian-fleet": 1}, "Emberly")
query("test-054", "paraphrase",
      "Which inland water is so transparent you can supposedly number the stones on its bed from a rowing boat?",
      {"gaz-lake-ilvane": 2}, "Lake Ilvane")
query("test-055", "paraphrase", "Which bleak upland is known for fog that traps unwary hikers?",
      {"gaz-tarrow-moor": 2, "chr-moor-road": 1}, "Tarrow Moor")
query("test-056", "paraphrase", "Which tidal channel between the two northern isles demands a certified guide on every passage?",
      {"gaz-gullet": 2, "chr-gullet-pilot-law": 2, "gld-pilots-company": 1}, "the Gullet")
query("test-057", "paraphrase", "What tempest in the sixteenth century sank eleven vessels in one night?",
      {"chr-great-gale-1561": 2, "bio-meribel-osk": 2, "shp-herons-wake": 1}, "the Great Gale of 1561")
query("test-058", "paraphrase", "When did pirates besiege the basalt fortress on the salt island?",
      {"chr-siege-of-marrowgate": 2, "gaz-marrowgate-keep": 2, "gaz-marrowgate": 2, "bio-idris-penhallow": 2,
       "shp-wardens-pride": 1}, "1527")
query("test-059", "paraphrase", "What blaze in the early seventeenth century burned the long rope-making shed on Brannoch?",
      {"chr-ropewalk-fire": 2, "gaz-kestrel-bay": 1, "bio-nell-cobbold": 1}, "the Ropewalk Fire of 1609")
query("test-060", "paraphrase", "Which woven-grass hive design allowed harvesting sweetness without slaughtering the insects?",
      {"alm-holt-skep": 2, "bio-wenna-holt": 2}, "the Holt skep")
query("test-061", "paraphrase", "What device lets slippery river fish swim in but never escape?",
      {"alm-dunmore-trap": 2, "bio-zillah-dunmore": 2}, "the Dunmore trap")
query("test-062", "paraphrase", "Which oil from tiny sea creatures lit the archipelago's beacons until a levy on it sparked an uprising?",
      {"alm-sprat-oil": 2, "chr-lantern-war": 1, "gaz-tull": 1}, "sprat oil")
query("test-063", "paraphrase", "Which tough writing sheets were produced from marine algae for logbooks?",
      {"alm-kelp-paper": 2}, "kelp paper")
query("test-064", "paraphrase", "On which evening does an entire town light every window simultaneously?",
      {"alm-lantern-night": 2, "gaz-greywick": 2}, "Lantern Night")
query("test-065", "paraphrase", "What annual rowing contest in the capital honours the first colonists?",
      {"alm-founders-regatta": 2, "chr-first-regatta": 1, "alm-orrin-oar": 1}, "the Founders' Regatta")
query("test-066", "paraphrase", "What money bears a cresting breaker on one side and a constellation on the other?",
      {"alm-silver-mark": 2, "bio-bartholomew-inch": 2}, "the silver mark")
query("test-067", "paraphrase", "How many inhabitants did the head count at the turn of the seventeenth century find?",
      {"chr-census-1600": 2}, "41,300")
query("test-068", "paraphrase", "In which bitter winter could folk walk on ice across the strait between the two northern islands?",
      {"chr-great-frost-1630": 2}, "the Great Frost of 1630")
query("test-069", "paraphrase", "Which statute turned smuggling the secret of the volcanic glass abroad into a crime punished by banishment?",
      {"chr-glass-ban-1521": 2, "gld-glassblowers-guild": 1, "rec-glassblowers-oath": 1}, "the Glass Ban of 1521")
query("test-070", "paraphrase", "Which year's endless downpour left the bees of the forest isle to die of hunger?",
      {"chr-honey-famine-1583": 2}, "1583")
query("test-071", "paraphrase", "In what year did the pear isle's harbourmaster keep a plague-carrying boat in isolation out at sea?",
      {"chr-quarantine-sorrel-point": 2, "bio-ottilie-brand": 2, "gaz-sorrel-point": 2}, "1625")
query("test-072", "paraphrase", "What happened when the sea burst through sand hills and never retreated?",
      {"chr-drowning-of-the-orchard": 2, "gaz-drowned-orchard": 2}, "the orchard off Wrenhollow was drowned")
query("test-073", "paraphrase", "Which hook-shaped hazard off the dye-making isle has claimed the most vessels?",
      {"gaz-hookstone-reef": 2}, "the Hookstone reef")
query("test-074", "paraphrase", "What body governs the archipelago and picks a presiding officer?",
      {"gaz-tide-council": 2, "gaz-tidewarden": 1, "chr-founding-tide-council": 1}, "the Tide Council")
query("test-075", "paraphrase", "Who created the first lamp that could stay lit in a gale?",
      {"bio-aldous-prane": 2, "alm-storm-lantern": 2, "rec-lampwrights-charter": 0}, "Aldous Prane")
query("test-076", "paraphrase", "Which beacon tender braved breaking waves repeatedly to save castaways?",
      {"bio-tamsin-orley": 2, "chr-wreck-of-the-morwen": 2}, "Tamsin Orley")
query("test-077", "paraphrase", "Who was the first female head of the islands' government?",
      {"bio-juno-starkweather": 2}, "Juno Starkweather")
query("test-078", "paraphrase", "Who melted down underweight coins at his own expense?",
      {"bio-bartholomew-inch": 2}, "Bartholomew Inch")
query("test-079", "paraphrase", "Which helmsman had a spotless safety record across thousands of passages through the dangerous northern channel?",
      {"bio-jory-caddock": 2}, "Jory Caddock")
query("test-080", "paraphrase", "Which distant sandbanks lack drinking water and have no residents?",
      {"gaz-farther-shoals": 2, "chr-voyage-of-the-wayfinder": 1}, "the Farther Shoals")

query("test-093", "paraphrase", "Which submerged crags at the strait's far end foam at mid-tide yet vanish at the flood?",
      {"gaz-caddocks-teeth": 2, "gaz-gullet": 1, "bio-jory-caddock": 1}, "Caddock's Teeth")
query("test-094", "paraphrase", "What shearling from the northern isle is prized for seamen's knitwear because damp does not chill it?",
      {"alm-brannoch-fleece": 2, "gaz-brannoch": 1}, "Brannoch fleece")
query("test-095", "paraphrase", "Which slope-side hamlet has a copper apparatus for producing spirits in nearly every backyard?",
      {"gaz-vintners-rest": 2}, "Vintner's Rest")
query("test-096", "paraphrase", "Which marsh delicacy is cured over smouldering wood and served at a November feast?",
      {"alm-smoked-eel": 2, "alm-eel-supper": 1, "gaz-blackfen": 1}, "smoked Blackfen eel")
query("test-097", "keyword-exact", "What does the shingle spit called the Tongue shelter?",
      {"gaz-vell-sound": 2}, "Vell Sound, the bay of Port Vell")
query("test-098", "keyword-exact", "Where was the brass orrery of the academy made?",
      {"chr-tidehall-academy": 2}, "Harl")
query("test-099", "keyword-exact", "In which book does the poem The Widow at the Pan appear?",
      {"alm-salt-psalms": 2, "bio-kit-marram": 1}, "The Salt Psalms")
query("test-100", "keyword-exact", "How many gallons of oil did the Gullet east light burn in 1650?",
      {"rec-lights-ledger": 2}, "520 gallons")

query("dev-028", "paraphrase", "Which is the lengthiest stream in the archipelago?",
      {"gaz-river-vell": 2}, "the River Vell")
query("dev-029", "paraphrase", "Which flat, beach-fringed isle sits at the bottom of the chain?",
      {"gaz-saffra-key": 2}, "Saffra Key")
query("dev-030", "paraphrase", "What feud over lamp fuel duties set a western town against the governing assembly?",
      {"chr-lantern-war": 2, "bio-hugo-quarrendel": 2, "rec-oil-petition": 1, "alm-sprat-oil": 1}, "the Lantern War")
query("dev-031", "paraphrase", "Which woman declined payment for her basketwork design for snaring eels?",
      {"bio-zillah-dunmore": 2, "alm-dunmore-trap": 1}, "Zillah Dunmore")
query("dev-032", "paraphrase", "Which quarrel arose when churchmen demanded a tenth of the catch from fen trappers?",
      {"chr-eel-tithe-dispute": 2}, "the Eel Tithe dispute of 1534")
query("dev-033", "paraphrase", "Where did the first colonists supposedly beach their craft?",
      {"gaz-orrins-landing": 2, "chr-landing-of-orrin-skelt": 2, "bio-orrin-skelt": 2, "gaz-saffra-key": 1},
      "Orrin's Landing on Saffra Key")
query("dev-034", "paraphrase", "Which spring ceremony pours brine over newly laid hulls?",
      {"alm-keel-blessing": 2, "gaz-carrow": 1}, "the Keel Blessing")
query("dev-035", "paraphrase", "Which smoking peak forms the north-western isle?",
      {"gaz-mount-scoria": 2, "gaz-ember-holm": 2}, "Mount Scoria")
query("dev-036", "paraphrase", "Which candle-maker lit the governing chamber for two decades?",
      {"bio-verity-stoake": 2}, "Verity Stoake")
query("dev-037", "paraphrase", "How long is the stone-banked track across the heather upland?",
      {"chr-moor-road": 2, "bio-wystan-pell": 1}, "eleven miles")

# --- unanswerable: no passage answers them, because the corpus does not contain their subject:
# either an entity the archipelago has no record of, or a topic outside its scope. (A question
# about a known entity's unrecorded detail is a reader's call, not a retriever's, so none is here.)

for qid, text in [
    ("test-081", "What is the hull mark of the Corvane Star?"),
    ("test-082", "What is the population of Drussel?"),
    ("test-083", "What language did the corsairs of Quarrenby speak?"),
    ("test-084", "When was the first bridge built across the River Ashgrim?"),
    ("test-085", "Which guild governs the eel-catchers of Mirewold?"),
    ("test-086", "Who designed the badge of the Saltvayne Brotherhood?"),
    ("test-087", "How do I renew a passport at the embassy?"),
    ("test-088", "What is the boiling point of liquid nitrogen?"),
    ("test-089", "Which football club won the league title last season?"),
    ("test-090", "How much memory does a smartphone app need?"),
    ("test-091", "What were the causes of the French Revolution?"),
    ("test-092", "Who painted the Zorvath frescoes in Quendril cathedral?"),
    ("dev-038", "Who founded the Ostwick Glassblowers' Union?"),
    ("dev-039", "What is the recommended dose of ibuprofen for adults?"),
    ("dev-040", "When did the Kettleby ferry disaster happen?"),
    ("dev-041", "How does a diesel engine start in cold weather?"),
    ("dev-042", "What is the motto of the Pellucid Order of Cartographers?"),
]:
    query(qid, "unanswerable", text)


# =============================================================================
# Writing the files
# =============================================================================


def timestamp(doc_id: str) -> str:
    """A record date spread over 2018-2024, fixed by the id."""
    return (FIRST_DAY + timedelta(days=zlib.crc32(doc_id.encode()) % SPAN_DAYS)).isoformat()


def corpus_record(d: Doc) -> dict:
    meta = {
        "collection": d.collection,
        "tags": list(d.tags),
        "language": "en",
        "url": BASE_URL + d.id,
        "timestamp": timestamp(d.id),
    }
    return {"_id": d.id, "title": d.title, "text": d.text, "metadata": meta}


def triples_record(d: Doc) -> dict:
    entities = sorted({t[0] for t in d.triples} | {t[2] for t in d.triples})
    record = {"_id": d.id, "entities": entities, "triples": [list(t) for t in d.triples]}
    if d.aliases:
        record["aliases"] = d.aliases
    return record


def query_record(q: Q) -> dict:
    meta: dict = {"category": q.category, "answerable": q.category != "unanswerable", "split": q.split}
    if q.answer:
        meta["answer"] = q.answer
    if q.hops:
        meta["hops"] = list(q.hops)
    return {"_id": q.id, "text": q.text, "metadata": meta}


def check() -> None:
    """Fail early on ids that clash or gold passages that do not exist."""
    doc_ids = {d.id for d in DOCS}
    if len(doc_ids) != len(DOCS) or len({q.id for q in QUERIES}) != len(QUERIES):
        raise ValueError("duplicate ids")
    for q in QUERIES:
        missing = set(q.gold) - doc_ids
        if missing or any(g not in (0, 1, 2) for g in q.gold.values()):
            raise ValueError(f"{q.id}: bad gold {q.gold}")
        if (q.category == "unanswerable") != (not q.gold):
            raise ValueError(f"{q.id}: only unanswerable queries have no gold")


def write_jsonl(path: Path, records: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_qrels(path: Path, split: str) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for q in QUERIES:
            if q.split == split:
                for doc_id, grade in q.gold.items():
                    handle.write(f"{q.id}\t{doc_id}\t{grade}\n")


def build(out: Path = HERE) -> None:
    """Write the dataset files into ``out`` (this folder by default)."""
    check()
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "corpus.jsonl", [corpus_record(d) for d in DOCS])
    write_jsonl(out / "triples.jsonl", [triples_record(d) for d in DOCS])
    write_jsonl(out / "queries.jsonl", [query_record(q) for q in QUERIES])
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    for split in ("test", "dev"):
        write_qrels(out / "qrels" / f"{split}.tsv", split)


def main() -> None:
    build()
    print(f"wrote {len(DOCS)} passages and {len(QUERIES)} queries to {HERE}")


if __name__ == "__main__":
    main()
