"""Issue 49, part 2: on a generated world the run's seed places the team (perception/starts.py), so seeds are
replicates there; a world file's start poses, and so an exported world's, stay as given."""

from perception.families.export import with_run_starts
from perception.families.generate import generated_mapping, open_world
from perception.mock import MockPerception
from perception.starts import team_starts
from perception.world import world_from_mapping

AGENTS = ["Agent1", "Agent2", "Agent3"]


def starts(world, seed, agents=AGENTS):
    perception = MockPerception(world, None, agents, seed)
    return [perception.get_agent_state(agent) for agent in agents]


def test_the_seed_places_the_team_on_a_generated_world():
    house = open_world("gen:house", 3)
    assert starts(house, 7) == starts(house, 7)  # the same seed, the same starts
    assert len({tuple(starts(house, seed)) for seed in range(1, 6)}) == 5
    assert starts(house, 7) != list(house.agent_starts[:3])  # not the generator's suggestion


def test_the_team_starts_together_and_a_larger_team_only_adds_agents():
    hall = open_world("gen:hall?size=30x30", 1)
    team = team_starts(hall, 5, 9)
    cells = {(pose.x, pose.y) for pose in team}
    assert len(cells) == 9 and all(hall.is_free(x, y) for x, y in cells)
    assert max(abs(a[0] - b[0]) + abs(a[1] - b[1]) for a in cells for b in cells) <= 4  # nine nearest by walking
    assert team_starts(hall, 5, 4) == team[:4]


def test_a_world_file_and_random_starts_place_as_before():
    mapping = generated_mapping("gen:house", 3)
    file_world = world_from_mapping(dict(mapping), "house.yaml")
    assert starts(file_world, 7) == list(file_world.agent_starts[:3])  # a file's starts are given
    house = open_world("gen:house", 3)
    scattered = MockPerception(house, None, AGENTS, 7, random_starts=True)
    assert [scattered.get_agent_state(agent) for agent in AGENTS] != starts(house, 7)


def test_an_exported_world_starts_the_team_where_its_seed_does():
    house = open_world("gen:house", 3)
    exported = world_from_mapping(dict(with_run_starts(generated_mapping("gen:house", 3), 7, 3)), "house.yaml")
    assert len(exported.agent_starts) == 4  # START_POSES at least
    assert starts(exported, 7) == starts(house, 7) and starts(exported, 8) == starts(house, 7)
