"""ConvstoreChatCompletionContext's options, option by option, against autogen-core 0.7.5's
ChatCompletionContext base and its built-in Buffered/Unbounded contexts; four event loops.

Collected as part of suite_autogen.py (which imports these tests), in its venv.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid

import pytest
from autogen_core.model_context import (BufferedChatCompletionContext, ChatCompletionContext,
                                        UnboundedChatCompletionContext)
from autogen_core.models import SystemMessage, UserMessage

from store.integrations.autogen import ConvstoreChatCompletionContext, ConvstoreChatCompletionContextConfig

from .scenario import URL, in_event_loops, with_store
from .suite_autogen import dumped, history


def key() -> str:
    return f"autogen-opt-{uuid.uuid4().hex}"


def test_every_option_of_the_built_ins_is_accepted():
    """BufferedChatCompletionContext's buffer_size and initial_messages (the base class's
    only option) are ours too, as keywords, and in the component config."""
    ours = inspect.signature(ConvstoreChatCompletionContext.__init__).parameters
    for builtin in (BufferedChatCompletionContext, ChatCompletionContext):
        for name in inspect.signature(builtin.__init__).parameters:
            if name != "self":
                assert ours[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    assert ours["initial_messages"].default is None
    assert set(BufferedChatCompletionContext.component_config_schema.model_fields) <= set(ConvstoreChatCompletionContextConfig.model_fields)


@pytest.mark.parametrize("size", [0, -1, "3"])
def test_a_bad_buffer_size_is_refused_as_buffered_refuses_it(size):
    def error(make):
        with pytest.raises(Exception) as caught:
            make()
        return type(caught.value), str(caught.value)

    assert error(lambda: ConvstoreChatCompletionContext(URL, "s-1", buffer_size=size)) == error(
        lambda: BufferedChatCompletionContext(size))


def test_methods_of_the_base_class_and_their_results():
    """Every public method of ChatCompletionContext, the same results as AutoGen's own
    contexts on the same messages (beyond the window, which keeps calls with results)."""
    session = key()
    seed = [SystemMessage(content="Be brief.")]

    async def body(store):
        ours = ConvstoreChatCompletionContext(store, session, initial_messages=seed)
        theirs = UnboundedChatCompletionContext(initial_messages=seed)
        for context in (ours, theirs):
            for message in history()[1:]:
                await context.add_message(message)
        assert dumped(await ours.get_messages()) == dumped(await theirs.get_messages())
        assert await ours.save_state() == await theirs.save_state()
        state = await theirs.save_state()
        for context in (ours, theirs):
            await context.clear()  # to empty, not back to the initial messages
            assert await context.get_messages() == []
            await context.load_state(state)
        assert dumped(await ours.get_messages()) == dumped(await theirs.get_messages())
        public = {n for n, _ in inspect.getmembers(ChatCompletionContext, inspect.iscoroutinefunction)
                  if not n.startswith("_")}
        assert public == {"add_message", "get_messages", "clear", "save_state", "load_state"}
        for name in public:
            ours_params = list(inspect.signature(getattr(ours, name)).parameters)
            assert ours_params == list(inspect.signature(getattr(theirs, name)).parameters), name

    with_store(body)


def test_one_context_from_four_event_loops_in_four_threads():
    """Issue 16.2: nothing of the context binds to the loop that first used it."""
    context = ConvstoreChatCompletionContext(URL, key(), initial_messages=[SystemMessage(content="S")])

    async def work(n: int) -> None:
        for r in range(3):
            await context.add_message(UserMessage(content=f"{n}-{r}", source="user"))
            await context.get_messages()

    in_event_loops(4, work)

    async def rest() -> list[str]:
        contents = [m.content for m in await context.get_messages()]
        await context.close()
        return contents

    contents = asyncio.run(rest())
    assert contents[0] == "S", contents  # seeded once, whichever loop came first
    assert sorted(contents[1:]) == sorted(f"{n}-{r}" for n in range(4) for r in range(3)), contents


__all__ = [name for name in list(globals()) if name.startswith("test_")]  # what the suite imports: the tests alone
