"""A stand-in game for the Unity-mode tests: a first-person view of labelled objects.

    python harness/stand_in_game.py TITLE POSE_FILE [--split] [--position X,Y] [--size WxH]
                                  [--arena HALF] [--pose-log FILE]

It moves while keys are HELD, read with pygame.key.get_pressed() once per frame,
as Unity's Input.GetKey is: a tap shorter than a frame can be missed.

    w / s        forward / back          left / right   turn (yaw)
    a / d        strafe left / right     up / down      pitch
    r / f        rise / sink             q / e          roll left / right

With --split the window shows two viewports side by side, each with its own pose:
the left one keeps the keys above; the right one is driven by

    i / k        forward / back          u / o          roll left / right
    j / l        strafe left / right     y / h          rise / sink
    (the right viewport starts facing the other way, and cannot turn or pitch)

After the first frame, and every frame in which a pose changed, the pose is written
to POSE_FILE as JSON, atomically: {"x", "y", "z", "yaw", "pitch", "roll"}, or
{"left": {...}, "right": {...}} with --split. x/y are the ground plane, z the
height; yaw 0 looks along +y and grows turning right; angles are in degrees.

With --arena HALF a fence of posts stands at |x| = HALF and |y| = HALF, and a walk
stops ARENA_MARGIN short of it: a move into the fence leaves the view as it was.
With --pose-log every pose written is also appended to FILE as a JSON line with the
time it was reached, {"t": time.time(), "pose": ..., "paused": ...}: the game's own log.

    p            pause / resume: nothing moves, and a banner says PAUSED

Run it under Xvfb with SDL_AUDIODRIVER=dummy.
"""

import argparse
import json
import math
import os
import time
from dataclasses import asdict, dataclass, replace

import pygame

MOVE_SPEED = 2.0  # units per second
TURN_SPEED = 90.0  # degrees per second, for yaw, pitch and roll
MAX_PITCH = 60.0
FOCAL = 1.2  # focal length as a fraction of the viewport width

# (name, colour, shape, (x, y, z) of its centre, size)
OBJECTS = (
    ("red cube", (220, 40, 40), "cube", (0.0, 5.0, 0.5), 1.0),
    ("green sphere", (40, 200, 60), "sphere", (-3.0, 8.0, 0.6), 1.2),
    ("blue cylinder", (40, 80, 230), "cylinder", (3.0, 9.0, 0.75), 1.5),
    ("yellow cube", (230, 210, 40), "cube", (6.0, -2.0, 0.5), 1.0),
    ("magenta sphere", (210, 50, 200), "sphere", (-1.0, -6.0, 0.6), 1.2),
)
SKY = (135, 170, 210)
GROUND = (110, 95, 80)
POST = (60, 45, 35)
POST_SIZE = 0.15  # width and depth of a fence post; it stands 1.2 high
ARENA_MARGIN = 0.5

# key -> (pose field, direction); "forward" and "strafe" move along the yaw.
LEFT_KEYS = {
    pygame.K_w: ("forward", 1),
    pygame.K_s: ("forward", -1),
    pygame.K_d: ("strafe", 1),
    pygame.K_a: ("strafe", -1),
    pygame.K_r: ("z", 1),
    pygame.K_f: ("z", -1),
    pygame.K_RIGHT: ("yaw", 1),
    pygame.K_LEFT: ("yaw", -1),
    pygame.K_UP: ("pitch", 1),
    pygame.K_DOWN: ("pitch", -1),
    pygame.K_e: ("roll", 1),
    pygame.K_q: ("roll", -1),
}
RIGHT_KEYS = {
    pygame.K_i: ("forward", 1),
    pygame.K_k: ("forward", -1),
    pygame.K_l: ("strafe", 1),
    pygame.K_j: ("strafe", -1),
    pygame.K_y: ("z", 1),
    pygame.K_h: ("z", -1),
    pygame.K_o: ("roll", 1),
    pygame.K_u: ("roll", -1),
}


@dataclass(frozen=True)
class Pose:
    x: float = 0.0
    y: float = 0.0
    z: float = 1.0  # eye height
    yaw: float = 0.0
    pitch: float = 0.0
    roll: float = 0.0

    def rounded(self):
        return {name: round(value, 3) for name, value in asdict(self).items()}


# With --split the right viewport looks the other way, so the halves show different objects.
START_POSES = {"left": Pose(), "right": Pose(yaw=180.0)}


def moved(pose, keys, pressed, seconds, arena=None):
    """The pose after the held keys acted for `seconds`; inside the fence of an `arena` of half-width HALF."""
    push = {"forward": 0, "strafe": 0, "z": 0, "yaw": 0, "pitch": 0, "roll": 0}
    for key, (field, direction) in keys.items():
        if pressed[key]:
            push[field] += direction
    step = MOVE_SPEED * seconds
    turn = TURN_SPEED * seconds
    heading = math.radians(pose.yaw)
    ahead, right = (math.sin(heading), math.cos(heading)), (math.cos(heading), -math.sin(heading))
    x = pose.x + step * (push["forward"] * ahead[0] + push["strafe"] * right[0])
    y = pose.y + step * (push["forward"] * ahead[1] + push["strafe"] * right[1])
    if arena is not None:
        inside = arena - ARENA_MARGIN
        x, y = max(-inside, min(inside, x)), max(-inside, min(inside, y))
    return replace(
        pose,
        x=x,
        y=y,
        z=max(0.1, pose.z + step * push["z"]),
        yaw=(pose.yaw + turn * push["yaw"]) % 360,
        pitch=max(-MAX_PITCH, min(MAX_PITCH, pose.pitch + turn * push["pitch"])),
        roll=(pose.roll + turn * push["roll"] + 180) % 360 - 180,
    )


def fence_posts(arena):
    """A post every unit along the arena's four sides, drawn as small unlabelled cubes."""
    if arena is None:
        return ()
    edge = range(-arena, arena + 1)
    corners = {(x, y) for x in edge for y in (-arena, arena)} | {(x, y) for x in (-arena, arena) for y in edge}
    return tuple(("", POST, "post", (float(x), float(y), 0.6), POST_SIZE) for x, y in sorted(corners))


def draw_view(surface, pose, font, posts=()):
    """Sky, ground, the fence posts and the objects in front of `pose`, far ones first."""
    width, height = surface.get_size()
    focal = FOCAL * width
    horizon = height / 2 + focal * math.tan(math.radians(pose.pitch))
    surface.fill(SKY)
    pygame.draw.rect(surface, GROUND, (0, horizon, width, height))
    heading = math.radians(pose.yaw)
    seen = []
    for name, colour, shape, (x, y, z), size in OBJECTS + posts:
        dx, dy = x - pose.x, y - pose.y
        depth = dx * math.sin(heading) + dy * math.cos(heading)
        lateral = dx * math.cos(heading) - dy * math.sin(heading)
        if depth > 0.3:
            seen.append((depth, lateral, z - pose.z, name, colour, shape, size))
    for depth, lateral, rise, name, colour, shape, size in sorted(seen, reverse=True):
        centre = (width / 2 + focal * lateral / depth, horizon - focal * rise / depth)
        side = max(2, focal * size / depth)
        box = pygame.Rect(0, 0, side, side)
        box.center = centre
        if shape == "sphere":
            pygame.draw.circle(surface, colour, centre, side / 2)
        elif shape == "post":
            box.height = side * 1.2 / POST_SIZE  # 1.2 high, centred at its middle
            box.center = centre
            pygame.draw.rect(surface, colour, box)
            continue  # no label
        elif shape == "cylinder":
            box.width = side * 0.6
            box.center = centre
            pygame.draw.rect(surface, colour, box)
            pygame.draw.ellipse(surface, colour, (box.left, box.top - side * 0.1, box.width, side * 0.2))
        else:
            pygame.draw.rect(surface, colour, box)
        label = font.render(name, True, (0, 0, 0))
        surface.blit(label, label.get_rect(midbottom=(centre[0], box.top - 4)))
    if pose.roll:
        rolled = pygame.transform.rotate(surface, pose.roll)
        surface.blit(rolled, rolled.get_rect(center=(width / 2, height / 2)))


def write_pose(path, poses, log=None, paused=False):
    """Writes the poses atomically, so a reader never sees half a file; and appends them to `log`."""
    data = poses["left"].rounded() if len(poses) == 1 else {side: pose.rounded() for side, pose in poses.items()}
    temporary = f"{path}.tmp"
    with open(temporary, "w") as file:
        json.dump(data, file)
    os.replace(temporary, path)
    if log is not None:
        with open(log, "a") as file:
            file.write(json.dumps({"t": time.time(), "pose": data, "paused": paused}) + "\n")


def pose_changed_between(log, start, end):
    """Whether the poses in a --pose-log differ between two wall-clock times (time.time())."""
    with open(log) as file:
        entries = [json.loads(line) for line in file]

    def pose_at(t):
        return [entry["pose"] for entry in entries if entry["t"] <= t][-1]

    return pose_at(start) != pose_at(end)


def main():
    parser = argparse.ArgumentParser(description="A stand-in game for the Unity-mode tests.")
    parser.add_argument("title")
    parser.add_argument("pose_file")
    parser.add_argument("--split", action="store_true", help="two viewports, two poses")
    parser.add_argument("--position", default=None, help="X,Y of the window's top-left corner")
    parser.add_argument("--size", default="640x360", help="WxH of the window")
    parser.add_argument("--arena", type=int, help="a fence at |x| = HALF and |y| = HALF that stops a walk")
    parser.add_argument("--pose-log", help="append every pose, with the time it was reached, to this file")
    args = parser.parse_args()
    if args.position:
        os.environ["SDL_VIDEO_WINDOW_POS"] = args.position
    width, height = (int(n) for n in args.size.split("x"))

    pygame.init()
    screen = pygame.display.set_mode((width, height))
    pygame.display.set_caption(args.title)
    font = pygame.font.Font(None, 20)
    clock = pygame.time.Clock()

    sides = {"left": LEFT_KEYS, "right": RIGHT_KEYS} if args.split else {"left": LEFT_KEYS}
    viewport_width = width // len(sides)
    viewports = {
        side: screen.subsurface((i * viewport_width, 0, viewport_width, height)) for i, side in enumerate(sides)
    }
    poses = {side: START_POSES[side] for side in sides}
    posts = fence_posts(args.arena)
    written = None  # the first frame is written too: the file then says the game is drawn
    paused = False
    while True:
        events = pygame.event.get()
        if any(event.type == pygame.QUIT for event in events):
            break
        toggles = sum(event.type == pygame.KEYDOWN and event.key == pygame.K_p for event in events)
        seconds = min(clock.tick(60) / 1000, 0.1)  # a stalled frame must not jump the pose
        if toggles % 2:
            paused = not paused
            write_pose(args.pose_file, poses, args.pose_log, paused)
        if not paused:
            pressed = pygame.key.get_pressed()
            poses = {side: moved(poses[side], keys, pressed, seconds, args.arena) for side, keys in sides.items()}
        for side, viewport in viewports.items():
            draw_view(viewport, poses[side], font, posts)
        if paused:
            banner = font.render("PAUSED", True, (255, 255, 255), (0, 0, 0))
            screen.blit(banner, banner.get_rect(center=(width / 2, height / 2)))
        pygame.display.flip()
        if poses != written:
            write_pose(args.pose_file, poses, args.pose_log, paused)
            written = poses
    pygame.quit()


if __name__ == "__main__":
    main()
