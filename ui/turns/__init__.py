"""The Turns panel: votes, who takes the floor, earlier turns, tools used."""
