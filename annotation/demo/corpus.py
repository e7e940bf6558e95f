"""A small simulator of restaurant-booking dialogs, in the spirit of the DSTC6 Track 1 simulation.

It writes MultiWOZ 2.x `data.json` so that the demo exercises the main corpus format end to end:
user turns carry `dialog_act` and `span_info` (word positions) for the slot values they mention.
Pure: no Django import. Deterministic for a given seed.
"""
import random

CUISINES = ["british", "cantonese", "french", "indian", "italian", "japanese", "korean", "spanish", "thai", "vietnamese"]
AREAS = ["centre", "north", "south", "east", "west"]
PRICES = ["cheap", "moderate", "expensive"]
PARTY = ["2", "3", "4", "5", "6", "8"]
DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NAMES = ["Lotus Corner", "The Copper Pot", "Saffron Lane", "Bistro Nord", "Golden Wok", "Casa Verde", "Umami House"]

OPENINGS = [
    "I'm looking for a {price} {cuisine} restaurant in the {area}.",
    "Hi, can you find me a {price} place in the {area} that serves {cuisine} food?",
    "I want to eat {cuisine} food tonight, something {price} in the {area} please.",
    "Could you help me find a {cuisine} restaurant? It should be {price} and in the {area}.",
]
BOOKINGS = [
    "Yes please, book a table for {people} people on {day}.",
    "Please reserve it for {people} people on {day}.",
    "That sounds good. Can you book it for {people} people on {day}?",
]
CLOSINGS = ["Thanks, that's all I need.", "Great, thank you very much.", "Perfect, goodbye."]


def _span_info(text, act, slots):
    """[[act, slot, value, start_word, end_word]] for each slot value in the text (MultiWOZ style)."""
    words = text.split(" ")
    spans = []
    for slot, value in slots:
        value_words = value.split(" ")
        for i in range(len(words) - len(value_words) + 1):
            window = [w.strip(".,?!").lower() for w in words[i : i + len(value_words)]]
            if window == [v.lower() for v in value_words]:
                spans.append([act, slot, value.lower(), i, i + len(value_words) - 1])
                break
    return spans


def _user_turn(text, act, slots):
    return {
        "text": text,
        "metadata": {},
        "dialog_act": {act: [[slot, value.lower()] for slot, value in slots]} if slots else {"general-thank": [["none", "none"]]},
        "span_info": _span_info(text, act, slots),
    }


def _system_turn(text, belief, act="Restaurant-Inform", pairs=()):
    return {
        "text": text,
        "metadata": {"restaurant": {"book": {"booked": [], "time": "", "day": belief.get("day", ""), "people": belief.get("people", "")},
                                    "semi": {"food": belief.get("food", "not mentioned"), "pricerange": belief.get("pricerange", "not mentioned"),
                                             "name": belief.get("name", "not mentioned"), "area": belief.get("area", "not mentioned")}}},
        "dialog_act": {act: [list(p) for p in pairs]} if pairs else {"general-reqmore": [["none", "none"]]},
        "span_info": [],
    }


FOLLOW_UPS = [
    ("Could you give me their phone number?", "Their phone number is 01223 {n:06d}."),
    ("What is the address, please?", "They are at {n} Market Street."),
    ("Do they have a postcode I can use?", "The postcode is CB{d} {n:d}XY."),
    ("Is there parking nearby?", "Yes, there is a car park around the corner."),
    ("Do they have vegetarian options?", "Yes, they have several vegetarian dishes."),
]


def generate_dialog(rng: random.Random, follow_ups: int = 0):
    cuisine, area, price = rng.choice(CUISINES), rng.choice(AREAS), rng.choice(PRICES)
    people, day, name = rng.choice(PARTY), rng.choice(DAYS), rng.choice(NAMES)
    first = rng.choice(OPENINGS).format(price=price, cuisine=cuisine, area=area)
    booking = rng.choice(BOOKINGS).format(people=people, day=day)
    belief = {"food": cuisine, "pricerange": price, "area": area}
    log = [
        _user_turn(first, "Restaurant-Inform", [("Food", cuisine), ("Price", price), ("Area", area)]),
        _system_turn(f"{name} is a {price} {cuisine} restaurant in the {area}. Shall I book a table?", belief,
                     pairs=[("Name", name.lower()), ("Price", price), ("Food", cuisine), ("Area", area)]),
        _user_turn(booking, "Restaurant-Inform", [("People", people), ("Day", day)]),
    ]
    belief.update(people=people, day=day, name=name.lower())
    ref = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(8))
    log.append(_system_turn(f"Booked! Your reference number is {ref}.", belief, act="Booking-Book", pairs=[("Ref", ref)]))
    for question, answer in rng.sample(FOLLOW_UPS, min(follow_ups, len(FOLLOW_UPS))):
        log.append(_user_turn(question, "Restaurant-Request", []))
        log.append(_system_turn(answer.format(n=rng.randrange(1000, 99999), d=rng.randrange(1, 9)), belief))
    log.append(_user_turn(rng.choice(CLOSINGS), "general-thank", []))
    log.append(_system_turn("You're welcome, enjoy your meal.", belief, act="general-bye", pairs=[("none", "none")]))
    goal = {
        "restaurant": {"info": {"food": cuisine, "pricerange": price, "area": area}, "book": {"people": people, "day": day}, "reqt": [], "fail_info": {}},
        "hotel": {}, "train": {}, "attraction": {}, "taxi": {}, "hospital": {}, "police": {},
        "message": [f"You are looking for a {price} {cuisine} restaurant in the {area} for {people} people on {day}."],
    }
    return {"goal": goal, "log": log}


def generate_corpus(n_dialogs: int, seed: int = 0, follow_ups: int = 0) -> dict:
    """A MultiWOZ-format dict from dialog id (SNG…json) to dialog; each dialog has 3 + follow_ups user turns."""
    rng = random.Random(seed)
    return {f"SNG{100000 + i:06d}.json": generate_dialog(rng, follow_ups) for i in range(n_dialogs)}
