"""Charts as HTML fragments: the only module that imports plotly.

Each function returns a `<div>` to place in a page; the page carries plotly's
script once (`plotly_script`; explorer/report/page.py), so nothing is fetched
from the network when it opens.
"""

from __future__ import annotations

import json

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots
from plotly.utils import PlotlyJSONEncoder

from explorer.report.room_marks import room_labels, room_shapes

CONFIG = {"displaylogo": False, "responsive": True}


def plotly_script() -> str:
    """plotly.js itself (about 4.8 MB), for a page's one <script>."""
    return get_plotlyjs()


def fragment(figure, div_id) -> str:
    return figure.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=CONFIG, auto_play=False)


def line_chart(div_id, title, x_title, y_title, series) -> str:
    """`series` is {name: (xs, ys)}, drawn as steps."""
    return fragment(_line_figure(title, x_title, y_title, series), div_id)


def live_line_chart(title, x_title, y_title, series) -> str:
    """`line_chart`'s figure as plotly JSON, for a live page to draw and redraw (Plotly.react)."""
    return _line_figure(title, x_title, y_title, series).to_json()


def _line_figure(title, x_title, y_title, series) -> go.Figure:
    figure = go.Figure()
    for name, (xs, ys) in series.items():
        figure.add_trace(go.Scatter(x=list(xs), y=list(ys), mode="lines", name=name, line={"shape": "hv"}))
    figure.update_layout(
        title=title, xaxis_title=x_title, yaxis_title=y_title, height=360, margin={"l": 50, "r": 20, "t": 50, "b": 40}
    )
    return figure


def points_chart(div_id, title, x_title, y_title, series, log_x=False) -> str:
    """`series` is {name: (xs, ys)}, drawn as points joined by lines (a measure against a size, say)."""
    figure = go.Figure()
    for name, (xs, ys) in series.items():
        figure.add_trace(go.Scatter(x=list(xs), y=list(ys), mode="lines+markers", name=name))
    figure.update_layout(
        title=title, xaxis_title=x_title, yaxis_title=y_title, height=360, margin={"l": 50, "r": 20, "t": 50, "b": 40}
    )
    if log_x:
        figure.update_xaxes(type="log")
    return fragment(figure, div_id)


AGENT_COLOURS = (
    "#d62728",
    "#1f77b4",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#e377c2",
    "#8c564b",
    "#bcbd22",
    "#7f7f7f",
)
FACING_SYMBOLS = {"north": "triangle-up", "east": "triangle-right", "south": "triangle-down", "west": "triangle-left"}


def agent_colour(index):
    return AGENT_COLOURS[index % len(AGENT_COLOURS)]


def replay_map(div_id, world, frames, agents) -> str:
    """The world from above, with a step slider and play/pause that move the agents.

    `world`: {width, depth, walls [(x, y)], rooms [Room], first_seen {(x, y): step}, objects [{name, x, y,
    level, finder, step}]} (finder None: never found); `frames`: [{label, poses {agent: (x, y, facing)}, trails
    {agent: ([xs], [ys])}, found {name}}], in time order; `agents`: the agent ids in team order.
    """
    figure, animated = _map_figure(world, frames[0], agents)
    colours = {agent: agent_colour(i) for i, agent in enumerate(agents)}
    figure.frames = [
        go.Frame(data=_frame_data(frame, world, agents, colours), traces=animated, name=frame["label"])
        for frame in frames
    ]
    figure.update_layout(updatemenus=[_play_buttons()], sliders=[_step_slider(frames)])
    return fragment(figure, div_id)


def live_map(world, frame, agents) -> str:
    """The map at one moment (`replay_map`'s world and one of its frames): its traces as plotly JSON,
    {"data": [...]}, for a live page; their layout is `live_map_layout`'s."""
    # The ground's heatmap styled as the report's, its cells set unchecked: plotly checks each one, slowly.
    heatmap = _seen_heatmap({**world, "first_seen": {}}).to_plotly_json()
    heatmap["z"] = _first_seen_grid(world)
    figure = go.Figure(data=[_missed_objects(world)])
    animated = [index + 1 for index in _add_animated_traces(figure, agents)]
    traces = [heatmap, *(trace.to_plotly_json() for trace in figure.data)]
    colours = {agent: agent_colour(i) for i, agent in enumerate(agents)}
    # The frame's data merged as plain dicts: plotly's own update takes a second for a team of 16.
    for index, data in zip(animated, _frame_data(frame, world, agents, colours)):
        _merge(traces[index], data.to_plotly_json())
    return json.dumps({"data": traces}, cls=PlotlyJSONEncoder)


def _merge(into: dict, new: dict) -> None:
    """`new`'s values into `into`, the dicts in both merged key by key."""
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def live_map_layout(world) -> str:
    """The map's layout (walls, rooms, axes) as JSON: the same at every moment, so made once, and as plain
    JSON (plotly's checks of a large world's thousands of wall shapes take seconds)."""
    return json.dumps(_map_layout(world))


def _map_figure(world, frame, agents) -> tuple[go.Figure, list[int]]:
    """The world from above with the agents as `frame` has them; the figure, and its traces a frame replaces."""
    figure = go.Figure()
    animated = _add_map_traces(figure, world, frame, agents)
    figure.update_layout(**_map_layout(world))
    return figure, animated


def _add_map_traces(figure, world, frame, agents) -> list[int]:
    """Adds the ground seen, the objects not found, and the agents and finds as `frame` has them; the
    indices of the traces a frame replaces."""
    figure.add_trace(_seen_heatmap(world))
    figure.add_trace(_missed_objects(world))
    animated = _add_animated_traces(figure, agents)
    colours = {agent: agent_colour(i) for i, agent in enumerate(agents)}
    for trace, data in zip(animated, _frame_data(frame, world, agents, colours)):
        figure.data[trace].update(data)
    return animated


def _map_layout(world) -> dict:
    return {
        "shapes": _wall_shapes(world["walls"]) + room_shapes(world["rooms"]),
        "annotations": room_labels(world["rooms"]),
        **_grid_axes(world["width"], world["depth"]),
        "height": max(420, 36 * world["depth"] + 200),
        "plot_bgcolor": "#fafafa",
        "margin": {"l": 50, "r": 20, "t": 30, "b": 40},
        "legend": {"orientation": "h", "x": 0.5, "xanchor": "center", "y": 1.1},
    }


def _seen_heatmap(world) -> go.Heatmap:
    """The ground, shaded by the step at which the team first saw each cell."""
    width, depth = world["width"], world["depth"]
    return go.Heatmap(
        z=_first_seen_grid(world),
        x=list(range(width)),
        y=list(range(depth)),
        colorscale="Greens",
        reversescale=True,
        opacity=0.45,
        zmin=0,
        showscale=True,
        colorbar={"title": "first seen<br>at step", "len": 0.6},
        hovertemplate="(%{x}, %{y}) first seen at step %{z}<extra></extra>",
        name="ground seen",
    )


def _first_seen_grid(world) -> list[list[float | None]]:
    """Each cell's step at which the team first saw it (None: never), a row per y."""
    first_seen = world["first_seen"]
    return [[first_seen.get((x, y)) for x in range(world["width"])] for y in range(world["depth"])]


def _missed_objects(world) -> go.Scatter:
    """The objects no one found, as open circles."""
    missed = [o for o in world["objects"] if o["finder"] is None]
    return go.Scatter(
        x=[o["x"] for o in missed],
        y=[o["y"] for o in missed],
        mode="markers",
        name="not found",
        marker={"symbol": "circle-open", "size": 12, "color": "#777", "line": {"width": 2}},
        text=[f"{o['name']} (level {o['level']}): never found" for o in missed],
        hoverinfo="text",
    )


def _add_animated_traces(figure, agents) -> list[int]:
    """Adds the traces each frame replaces: per agent its trail and its marker, then the finds; their indices."""
    animated = []
    for index, agent in enumerate(agents):
        colour = agent_colour(index)
        figure.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="lines",
                name=f"{agent} path",
                showlegend=False,
                line={"color": colour, "width": 2},
                opacity=0.6,
                hoverinfo="skip",
            )
        )
        figure.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="markers+text",
                name=agent,
                textposition="top center",
                textfont={"color": colour, "size": 13},
                marker={"size": 16, "color": colour, "line": {"width": 1, "color": "#000"}},
            )
        )
        animated += [len(figure.data) - 2, len(figure.data) - 1]
    figure.add_trace(
        go.Scatter(
            x=[],
            y=[],
            mode="markers",
            name="found",
            marker={"symbol": "star", "size": 15, "line": {"width": 1, "color": "#000"}},
        )
    )
    animated.append(len(figure.data) - 1)
    return animated


def _frame_data(frame, world, agents, colours) -> list[go.Scatter]:
    """One frame's animated traces, in the order `_add_animated_traces` added them."""
    data = []
    for agent in agents:
        xs, ys = frame["trails"].get(agent, ([], []))
        data.append(go.Scatter(x=xs, y=ys))
        data.append(_agent_marker(agent, frame["poses"].get(agent)))
    found = [o for o in world["objects"] if o["name"] in frame["found"]]
    data.append(
        go.Scatter(
            x=[o["x"] for o in found],
            y=[o["y"] for o in found],
            marker={"color": [colours.get(o["finder"], "#000") for o in found]},
            text=[f"{o['name']} (level {o['level']}): found by {o['finder']} at step {o['step']}" for o in found],
            hoverinfo="text",
        )
    )
    return data


def _agent_marker(agent, pose) -> go.Scatter:
    """The agent where `pose` (x, y, facing) puts it, pointing its way; empty before it has one."""
    return go.Scatter(
        x=[pose[0]] if pose else [],
        y=[pose[1]] if pose else [],
        text=[agent.replace("Agent", "A")] if pose else [],
        marker={"symbol": FACING_SYMBOLS.get(pose[2], "circle") if pose else "circle"},
        hovertext=[f"{agent} at ({pose[0]}, {pose[1]}) facing {pose[2]}"] if pose else [],
        hoverinfo="text",
    )


def _wall_shapes(walls) -> list[dict]:
    """A dark square under each wall cell."""
    return [
        {
            "type": "rect",
            "x0": x - 0.5,
            "x1": x + 0.5,
            "y0": y - 0.5,
            "y1": y + 0.5,
            "fillcolor": "#444",
            "line": {"width": 0},
            "layer": "below",
        }
        for x, y in walls
    ]


def _grid_axes(width, depth) -> dict[str, dict]:
    """The x and y axes over the grid's cells, one unit each way."""
    return {
        "xaxis": {
            "range": [-0.5, width - 0.5],
            "showgrid": False,
            "zeroline": False,
            "dtick": 1,
            "title": "x (east)",
            "constrain": "domain",
        },
        "yaxis": {
            "range": [-0.5, depth - 0.5],
            "showgrid": False,
            "zeroline": False,
            "dtick": 1,
            "title": "y (north)",
            "scaleanchor": "x",
            "constrain": "domain",
        },
    }


def _play_buttons() -> dict:
    """Play and Pause."""
    play = {"frame": {"duration": 400, "redraw": True}, "fromcurrent": True, "transition": {"duration": 0}}
    return {
        "type": "buttons",
        "direction": "left",
        "x": 0,
        "y": 1.08,
        "xanchor": "left",
        "buttons": [
            {"label": "Play", "method": "animate", "args": [None, play]},
            {
                "label": "Pause",
                "method": "animate",
                "args": [[None], {"mode": "immediate", "frame": {"duration": 0, "redraw": False}}],
            },
        ],
    }


def _step_slider(frames) -> dict:
    """A slider with a stop per frame."""
    return {
        "active": 0,
        "currentvalue": {"prefix": "step "},
        "pad": {"t": 50},
        "steps": [
            {
                "label": frame["label"],
                "method": "animate",
                "args": [[frame["label"]], {"mode": "immediate", "frame": {"duration": 0, "redraw": True}}],
            }
            for frame in frames
        ],
    }


def interval_chart(div_id, title, x_title, labels, means, lows, highs, notes, reference=None) -> str:
    """A mean per label, a row each in its own colour, with its 95% interval as an error bar (a None low or
    high: none). `notes` is each row's hover text: the figures and how many runs they are over. `reference`: a
    dashed vertical line there (0 for differences, which then read as a forest plot)."""
    figure = go.Figure()
    for index, (label, mean, low, high, note) in enumerate(zip(labels, means, lows, highs, notes)):
        colour = agent_colour(index)
        figure.add_trace(
            go.Scatter(
                x=[mean],
                y=[label],
                mode="markers",
                marker={"size": 11, "color": colour},
                error_x=_error_bar(colour, mean, low, high),
                hovertext=[note],
                hoverinfo="text",
                showlegend=False,
            )
        )
    if reference is not None:
        figure.add_vline(x=reference, line={"dash": "dash", "color": "#888", "width": 1})
    figure.update_layout(
        title=title,
        xaxis={"title": x_title, "rangemode": "tozero"},
        yaxis={"autorange": "reversed", "automargin": True},
        height=110 + 36 * len(labels),
        margin={"l": 20, "r": 20, "t": 50, "b": 40},
    )
    return fragment(figure, div_id)


def _error_bar(colour, mean, low, high) -> dict:
    """A point's 95% interval as plotly's asymmetric error bar (a None low or high: none that way)."""
    return {
        "type": "data",
        "symmetric": False,
        "thickness": 2,
        "width": 6,
        "color": colour,
        "array": [None if high is None else high - mean],
        "arrayminus": [None if low is None else mean - low],
    }


def facet_chart(div_id, title, y_title, columns) -> str:
    """`columns` is {column title: {colour name: (mean, low, high, note)}}: a subplot per column, side by side on
    one y axis, and in each a point per colour name with its 95% interval as an error bar; a colour name keeps
    its colour, and its one legend entry, across the columns. `note` is the point's hover text."""
    names = list(dict.fromkeys(name for points in columns.values() for name in points))
    figure = make_subplots(rows=1, cols=max(len(columns), 1), shared_yaxes=True, subplot_titles=list(columns))
    in_legend: set[str] = set()
    for number, points in enumerate(columns.values(), start=1):
        for name, (mean, low, high, note) in points.items():
            colour = agent_colour(names.index(name))
            showlegend = name not in in_legend
            in_legend.add(name)
            figure.add_trace(
                go.Scatter(
                    x=[name],
                    y=[mean],
                    mode="markers",
                    name=name,
                    legendgroup=name,
                    showlegend=showlegend,
                    marker={"size": 11, "color": colour},
                    error_y=_error_bar(colour, mean, low, high),
                    hovertext=[note],
                    hoverinfo="text",
                ),
                row=1,
                col=number,
            )
    figure.update_xaxes(showticklabels=False)
    figure.update_yaxes(title_text=y_title, rangemode="tozero", row=1, col=1)
    figure.update_layout(
        title=title, height=400, legend={"orientation": "h", "y": -0.1}, margin={"l": 50, "r": 20, "t": 70, "b": 40}
    )
    return fragment(figure, div_id)


def band_chart(div_id, title, x_title, y_title, curves) -> str:
    """`curves` is {name: (xs, means, lows, highs)}: each mean a line, and its 95% interval a band of the
    same colour (lows and highs None: no band)."""
    figure = go.Figure()
    for index, (name, (xs, means, lows, highs)) in enumerate(curves.items()):
        colour = agent_colour(index)
        if lows is not None:
            figure.add_trace(
                go.Scatter(
                    x=list(xs) + list(xs)[::-1],
                    y=list(highs) + list(lows)[::-1],
                    fill="toself",
                    fillcolor=colour,
                    line={"width": 0},
                    opacity=0.18,
                    hoverinfo="skip",
                    name=f"{name} (95% CI)",
                    legendgroup=name,
                    showlegend=False,
                )
            )
        figure.add_trace(
            go.Scatter(
                x=list(xs), y=list(means), mode="lines", name=name, legendgroup=name, line={"color": colour, "width": 2}
            )
        )
    figure.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title=y_title,
        height=420,
        legend={"orientation": "h", "y": -0.2},
        margin={"l": 50, "r": 20, "t": 50, "b": 40},
    )
    return fragment(figure, div_id)
