"""General English relatedness for relation words, kept as data and read by `text`.

A question rarely uses the words its record uses ("boss" for "manager", "lives in" for
"resides at", "how much does it cost" for "price"). Stemming joins inflections and trigram
neighbours join spellings, but neither joins two different words for one idea. These tables
do, from general knowledge of English, not from any suite: the common words for people and
roles, places, organisations, time and schedules, money, quantities, contact details,
ownership, funding, maintenance, membership and the like.

Every table is applied through `text` to stored texts and questions alike, so a record and a
question speaking of one thing in different words meet in the middle.

- `SYNONYMS`: one group a line (an indented line goes on with the one above), entries split
  by commas; every entry is related to every other. An entry of several words is a *phrase*
  ("out of hours", "look after"): wherever its words occur in a row, the phrase also counts
  as one term.
- `CATEGORIES`: `head: member, member, ...`; the head is related to each member and each
  member to the head, but members are not related to one another ("vehicle" finds "truck"
  and "van", yet "truck" does not find "van"; "weekday" finds "Tuesday", yet "Tuesday" does not
  find "Thursday").
- `IRREGULAR`: past forms no suffix rule can reach, mapped to the base word.
- `FRAMING`: words that say when or how loosely a question is asked ("today", "currently", "at
  the start of December") rather than what it is about; they count for little.
"""

from __future__ import annotations

SYNONYMS = """
ceo, chief executive, chief executive officer, managing director, boss, president, run, head
lead, leader, head, direct, director, chair, chairman, chairperson, helm, in charge, boss
manage, manager, management, supervise, supervisor, oversee, overseer, line manager, boss
report to, answer to, line manager, manager, boss, reporting line
owner, own, ownership, belong, possess, proprietor, property of
responsible, responsibility, in charge, accountable, owner, own, look after, take care of, care for,
    maintain, handle
maintain, maintainer, maintenance, look after, upkeep, servicing, care for, steward, keep up
employ, employee, employer, staff, worker, personnel, hire, recruit, workforce, headcount, people
work, job, role, position, post, occupation, employed, works in, works at
team, squad, group, crew, unit, department, division, dept, guild
member, membership, belong, join, joined, part of, enrolled
colleague, coworker, peer, teammate, workmate
customer, client, patron, account, buyer, shopper
supplier, vendor, provider, supply, provide, source, wholesaler, furnish, come from, deliver
partner, spouse, wife, husband, girlfriend, boyfriend, fiance
doctor, dr, physician, gp, medic, clinician, consultant
vet, veterinarian, veterinary, veterinary surgeon
nurse, carer, caregiver, matron
teacher, instructor, tutor, lecturer, professor, trainer, educator
coach, head coach, manager, trainer, coaching
mentor, mentoring, adviser, advisor, guide, sponsor
student, pupil, learner, trainee, apprentice, intern
founder, found, founded, establish, set up, create, started, co-founder
author, write, writer, wrote, written, compose
assign, assignee, allocate, allot, assigned, appoint, designate
appoint, hire, name, nominate, select, choose, pick
based, base, headquarters, headquartered, hq, head office, main office, located, location, situated,
    sited, seat
live, living, reside, resident, residence, home, dwell, settle, relocate, relocation, move, moving,
    based
move, moving, relocate, relocation, transfer, switch, shift
address, street, road, avenue, postcode, zip code, location
office, branch, premises, bureau, site, workplace
building, block, hall, tower, wing, house, facility
room, hall, chamber, theatre, theater, auditorium, venue, lecture hall
floor, storey, story, level
berth, moor, moored, mooring, dock, quay, pier, wharf, tie up, tied up, anchor, anchored
port, harbour, harbor, dock, marina, terminal, docks
parking, car park, park, garage, parking lot, parking space, parking permit
desk, seat, sit, sitting, seated, workstation, work station, hot desk, place
region, area, zone, district, territory, province, county, locality
warehouse, depot, storehouse, stockroom, yard, distribution centre, fulfilment centre,
    fulfillment center
store, keep, kept, hold, house, storage, stock, stash, lock up, stored, locked
near, nearby, beside, next to, adjacent, close to, alongside, by
go, travel, visit, head to, attend, get to, make it to
company, firm, business, organisation, organization, corporation, enterprise, outfit, operator,
    provider, vendor
foundation, trust, charity, institute, institution, organisation, organization, body, agency
school, college, university, academy, campus, faculty
hospital, clinic, practice, surgery, infirmary, medical centre, health centre
shop, store, retailer, outlet, boutique
restaurant, cafe, bistro, eatery, diner, canteen, coffee shop
council, authority, government, ministry, municipality, agency, department
schedule, timetable, rota, roster, calendar, agenda
meeting, meet, session, standup, sync, huddle, call, gathering, assembly
agm, annual general meeting, general meeting, annual meeting, assembly
deadline, due, due date, cutoff, cut off, latest, no later than, submit, submission, hand in
start, begin, beginning, commence, launch, open, kick off, onset, starts
end, finish, close, stop, conclude, terminate, cease, expire, lapse, run out, ends, ending
open, opening, opening hours, business hours, working hours, office hours, hours
after hours, out of hours, outside hours, overnight, night, nighttime, midnight, closed, on call
close, closed, shut, closure, closing
depart, departure, leave, leaves, set off, head off, go out, dispatch, leaving
arrive, arrival, come, turn up, show up, reach, get in, land, drop by
deliver, delivery, deliveries, drop off, bring, ship, shipment, dispatch, courier, arrive, turn up,
    come
day, date, weekday, days
daily, every day, each day, per day, a day
weekly, every week, each week, per week, a week, week
monthly, every month, each month, per month, a month, month
yearly, annual, annually, every year, each year, per year, per annum, a year, year
morning, am, breakfast time
evening, pm, night, tonight
lag, behind, delay, delayed, late, latency, slow, backlog, lagging
duration, length, how long, period, span, last, lasting
interval, frequency, how often, cadence, every
expire, expiry, expiration, lapse, lapsed, valid until, validity, run out, expired
reopen, reopening, open again, resume, restart, back open, reopened
cost, price, pay, charge, fee, tariff, rate, fare, spend, expense, bill, invoice, payment, priced,
    how much
salary, wage, pay, income, earnings, compensation, remuneration, earn, paid
fund, funder, funding, finance, financing, financed, sponsor, sponsorship, grant, pay for,
    paying for, bankroll, backer, invest, investment, investor, donor, donation, award, endow,
    funded
award, grant, give, present, confer, bestow, awarded, granted
budget, allowance, allocation, spending limit, cap, limit, spending cap
revenue, sales, turnover, income, takings
profit, margin, earnings, gain, surplus
debt, loan, owe, borrow, credit, liability
buy, purchase, order, procure, procurement, acquire, acquisition, bought
sell, sale, sold, sells, retail
discount, rebate, reduction, markdown, concession
tax, vat, levy, duty
capacity, hold, contain, accommodate, fit, seat, seats, seating, volume, storage capacity, size,
    room for, max, maximum, beds, places
count, number, total, amount, quantity, how many, how much, tally, figure, headcount, size
size, big, large, area, dimension, dimensions, footprint
weight, heavy, mass, weigh, weighs
full, fill, filled, fill level, level, occupancy, utilisation, utilization, capacity, how full
percent, percentage, share, proportion, ratio, rate
speed, fast, velocity, throughput, rate, quick
distance, far, how far, away, long
temperature, temp, degrees, celsius, fahrenheit, hot, cold, warm
age, old, how old, aged, years old
increase, raise, rise, grow, go up, bump, hike, boost, higher, up, raised
decrease, reduce, cut, lower, drop, fall, go down, trim, shrink, lowered, reduced
phone, telephone, phone number, number, line, call, ring, dial, mobile, cell, hotline, extension,
    helpline, contact number, landline
email, e-mail, mail, inbox, email address, write to
contact, reach, get in touch, chase, talk to, speak to, get hold of, ping
website, site, url, web page, homepage, link, web address
password, passcode, pin, passphrase, code, credentials, login, key
wifi, wi-fi, wireless, network, internet, hotspot
server, host, machine, node, instance, box, vm
database, db, datastore, data store
replica, standby, secondary, follower, read replica, mirror
primary, master, leader, main
deploy, deployment, release, ship, roll out, launch, go live, publish
bug, issue, defect, problem, fault, error, glitch
ticket, issue, case, request, task
outage, downtime, incident, disruption, failure, down, unavailable
uptime, availability, available, reliability, sla
version, release, build, edition
depend, dependency, dependent, rely, reliant, require, need, upstream, based on, hinge on, draw on
power, electricity, energy, feed, supply, electric, grid, mains, powered
water, drinking water, supply, tap water
build, built, make, made, develop, developer, create, construct, construction, builds
collaborate, collaboration, partner, work with, cooperate, team up, joint
cover, stand in, substitute, deputise, deputize, deputy, backup, back up, fallback, fall back,
    standby, take over, relief, understudy, cover for, escalate
replace, replacement, succeed, successor, supersede, substitute, swap, switch, take over
block, blocked, hold up, holding up, stall, stuck, obstruct, prevent, halt, stop, blocking
cause, reason, because, due to, root cause, result from, lead to, trigger, why
fix, repair, resolve, patch, mend, remedy, solve, sort out, fixed
break, broke, broken, fail, failure, crash, outage, failed
check, inspect, inspection, review, audit, examine, survey, assess, inspected
approve, approval, sign off, authorise, authorize, endorse, ok, sign
budget holder, budget owner, hold the budget, holds the budget, control the budget,
    approve spending, approves spending, sign off spending, authorise spending,
    authorize spending, spending authority, purse strings
point of contact, contact person, liaison, liaise, go between, first port of call
allergy, allergic, allergies, intolerance, intolerant, sensitivity
neighbour, neighbor, next door, live next to
sign, signature, countersign, countersigned, signed, initial, sign for, witness
give, hand out, hand over, dispense, issue, administer, provide, distribute, dose
medicine, medication, drug, drugs, dose, prescription, pill, tablet, med, meds, pharmaceutical
controlled, scheduled, restricted, regulated, controlled drug
sick, ill, unwell, vomit, vomiting, poorly, injured, hurt, illness, disease, being sick
emergency, emergencies, urgent, urgency, critical, crisis, accident
take, bring, send, refer, transfer, carry, drive, ferry, sent
operate, operator, run, serve, ply, operated, operating
notice, warning, notify, notification, advance notice, heads up, inform, alert, forewarn
terminate, termination, end, cancel, cancellation, quit, leave, exit, break clause, walk away,
    leaving
lease, rent, let, tenancy, rental, hire, sublet, landlord, tenant, leasehold
contract, agreement, deal, arrangement, terms
carry over, roll over, carry forward, bring forward, carryover, rollover
holiday, leave, vacation, annual leave, time off, pto, days off
qualification, qualified, certificate, certification, certified, licence, license, licensed,
    accreditation, accredited, credential
train, training, course, class, lesson, workshop
book, booking, reserve, reservation, appointment, slot, booked
cancel, call off, scrap, drop, cancelled, canceled
travel, trip, journey, commute, fly, flight, drive
car, vehicle, motorist, traffic, cars, auto, automobile
route, line, path, itinerary
bus, coach, shuttle, minibus
ship, vessel, boat, tanker, freighter, container ship, carrier, bulk carrier
truck, lorry, hgv
speak, language, speaks, fluent, tongue
born, birth, birthday, birthplace, native
marry, married, spouse, wedding, wed
child, kid, son, daughter, children, kids
parent, father, mother, mum, mom, dad
friend, buddy, pal
format, formatting, formatted, style, layout, structure, presentation, paragraph, paragraphs,
    bullet, bullet point, table, markdown, prose, emoji, tone
answer, reply, response, respond, write back, message
prefer, preference, like, favourite, favorite, want, wish, rather
badge, pass, card, id card, keycard, access card, lanyard
permit, pass, licence, license, authorisation, authorization, permission
allow, permit, may, permission, entitle, entitled, eligible, allowed
forbid, prohibit, ban, banned, not allowed, disallow, forbidden
require, need, must, mandatory, obligatory, compulsory, necessary, have to, required
policy, rule, regulation, guideline, procedure, protocol, handbook, process, standard
report, document, record, file, doc, write-up, paper, summary
source, reference, citation, origin
rating, rated, rate, rank, score, grade
load, demand, draw, consumption, usage
output, production, generate, generation, yield, produce, generated
power, output, power output, rating, rated, wattage, kw, kilowatt, megawatt, mw, capacity
beat, exceed, outperform, surpass, above, ahead of
plan, planning, roadmap, strategy, forecast, projection
goal, target, objective, aim
vaccine, vaccination, jab, shot, immunisation, immunization, booster, inoculation
fridge, refrigerator, cooler, cold store, chiller, freezer
test, blood test, sample, screening, lab test
lab, laboratory, labs, testing lab
surgery, operation, procedure, op
anaesthetic, anesthetic, sedation, sedate, sedated, anaesthesia, anesthesia, general anaesthetic
teeth, tooth, dental, dentist, dentistry
elderly, old, senior, aged, older, geriatric
patient, inpatient, outpatient, client
animal, pet
dog, puppy, hound
cat, kitten
food, meal, eat, lunch, dinner, breakfast, catering, menu
coffee, beans, coffee beans, espresso, roast, roaster
stop, halt, terminate, kill, end, abort, cancel, killed, terminated
process, pid, process id, job, task
show, demo, demonstrate, present, presentation, showcase
name, called, named, title, label, known as
price list, tariff, rate card
phone line, hotline, number, line
"""

CATEGORIES = """
weekday: monday, tuesday, wednesday, thursday, friday, saturday, sunday, weekend
vehicle: car, van, truck, lorry, bus, coach, tram, train, bike, bicycle, motorbike, fleet, taxi
city: town, capital, metropolis, place
location: city, town, village, country, region, area, place, address, site, where
organisation: company, firm, business, foundation, trust, charity, institute, agency, council,
    authority, university, school, bank, nonprofit
person: people, man, woman, staff, employee, individual
sibling: sister, brother, twin
animal: dog, cat, rabbit, horse, bird, parrot, guinea pig, hamster, ferret, tortoise
building: office, warehouse, depot, hospital, school, station, tower, block, hall, plant
facility: plant, station, substation, centre, center, site, depot, works
currency: euro, eur, dollar, usd, pound, gbp, yen
month: january, february, march, april, may, june, july, august, september, october, november,
    december
season: spring, summer, autumn, fall, winter
qualification: degree, diploma, certificate, licence, license, accreditation
contact: phone, email, address, number, mobile
"""

IRREGULAR = """
led lead, ran run, held hold, kept keep, sat sit, left leave, took take, taken take, gave give,
given give, paid pay, sold sell, bought buy, built build, sent send, met meet, brought bring,
told tell, went go, gone go, came come, made make, found find, began begin, begun begin,
wrote write, written write, drove drive, driven drive, flew fly, flown fly, spent spend,
lent lend, lost lose, won win, chose choose, chosen choose, fell fall, fallen fall, felt feel,
grew grow, grown grow, knew know, known know, laid lay, meant mean, rose rise, risen rise,
saw see, seen see, slept sleep, spoke speak, spoken speak, stood stand, struck strike,
taught teach, thought think, threw throw, thrown throw, understood understand, woke wake,
wore wear, worn wear, hid hide, hidden hide, broke break, broken break, froze freeze,
frozen freeze, shook shake, stole steal, stolen steal, rode ride, ridden ride, forgot forget,
forgotten forget, dealt deal, fed feed, fled flee, caught catch, fought fight, sought seek,
sank sink, sunk sink, swam swim, children child, people person, men man, women woman,
mice mouse, teeth tooth, feet foot, geese goose
"""

FRAMING = """
today tonight currently current presently nowadays moment still recently lately anymore again
latest newest last according
ultimately actually exactly roughly approximately usually normally typically generally start
beginning middle mid early late end time date use using used able january february march april
may june july august september october november december jan feb mar apr jun jul aug sep sept
oct nov dec spring summer autumn fall winter morning afternoon evening
"""
